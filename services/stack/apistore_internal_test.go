package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/services/api"
)

func TestAPIErrMapsTheReadModelsSentinels(t *testing.T) {
	t.Parallel()
	other := errors.New("connection refused")
	cases := []struct {
		name string
		err  error
		want error // errors.Is(got, want); nil: got is nil
	}{
		{"nil", nil, nil},
		{"not found", pgview.ErrNotFound, api.ErrNotFound},
		{"wrapped not found", fmt.Errorf("get run r: %w", pgview.ErrNotFound), api.ErrNotFound},
		{"invalid cursor", fmt.Errorf("decode cursor: %w", pgview.ErrInvalidCursor), api.ErrInvalidCursor},
		{"other", other, other},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := apiErr(c.err)
			if c.want == nil {
				if got != nil {
					t.Fatalf("apiErr(nil) = %v", got)
				}
				return
			}
			if !errors.Is(got, c.want) || !errors.Is(got, c.err) {
				t.Fatalf("apiErr(%v) = %v, want it to be %v and keep the original", c.err, got, c.want)
			}
		})
	}
}

// TestRunRecordCopiesEveryField: a runs row with every field set reads as a
// record with the same values, so a field added to one and not copied fails.
func TestRunRecordCopiesEveryField(t *testing.T) {
	t.Parallel()
	qp := int64(3)
	row := pgview.Run{RunID: "run_1", TenantID: "acme", PlatformSessionID: "s1", AgentID: "coder",
		ParentRunID: "run_0", Status: "queued", PauseReason: "approval", ErrorCode: "e", CancelReason: "c",
		Input: json.RawMessage(`{"content":"hi"}`), SandboxKey: json.RawMessage(`{}`), Metadata: json.RawMessage(`{"a":1}`),
		LastSeq: 7, CreatedAt: time.UnixMilli(1), UpdatedAt: time.UnixMilli(2), SnapshotHash: "h",
		Usage:             pgview.Usage{ModelCalls: 1, PromptTokens: 2, CompletionTokens: 3, TotalTokens: 5, Compactions: 1},
		AcceptedPartition: 2, AcceptedOffset: 9, QueuePosition: &qp}
	rv, gv := reflect.ValueOf(row), reflect.ValueOf(runRecord(row))
	if rv.NumField() != gv.NumField() {
		t.Fatalf("pgview.Run has %d fields, api.RunRecord %d", rv.NumField(), gv.NumField())
	}
	for i := range rv.NumField() {
		name := rv.Type().Field(i).Name
		if rv.Field(i).IsZero() {
			t.Fatalf("test row leaves %s unset", name)
		}
		got := gv.FieldByName(name)
		if !got.IsValid() {
			t.Fatalf("api.RunRecord has no field %s", name)
		}
		want := rv.Field(i).Interface()
		if name == "Usage" {
			want = api.Usage(row.Usage)
		}
		if !reflect.DeepEqual(got.Interface(), want) {
			t.Errorf("%s = %v, want %v", name, got.Interface(), want)
		}
	}
}
