package events_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// TestAppendJSONEncodesAsJSONMarshal compares AppendJSON with json.Marshal
// on sealed envelopes whose strings need every kind of escape, and checks
// that it writes every field Envelope has: a field added to the struct and
// not to AppendJSON fails here.
func TestAppendJSONEncodesAsJSONMarshal(t *testing.T) {
	t.Parallel()
	var tags []string
	et := reflect.TypeFor[events.Envelope]()
	for i := range et.NumField() {
		if et.Field(i).IsExported() { // the unexported shared payload is no part of the event
			tags = append(tags, et.Field(i).Tag.Get("json"))
		}
	}
	want := []string{"eventId", "runId", "seq", "schemaVersion", "type", "occurredAt", "emittedAt",
		"platformSessionId,omitempty", "tenantId", "itemId,omitempty", "commandId,omitempty", "payload"}
	if !slices.Equal(tags, want) {
		t.Fatalf("Envelope's fields are %v; AppendJSON writes %v: update it", tags, want)
	}
	odd := []string{"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnewline\n\x00\x1f",
		"é ü 漢字 🙂", "line\u2028sep\u2029", "bad \xff\xfe utf-8", "\x7f del"}
	for _, s := range odd {
		for _, d := range []events.Draft{
			{Type: events.ItemDelta, ItemID: s, CommandID: s, Payload: events.ItemDeltaPayload{Delta: s}},
			{Type: events.RunStarted, Payload: events.RunStartedPayload{}},
		} {
			e, err := d.Seal(events.Identity{RunID: "run_" + s, TenantID: s, PlatformSessionID: s}, 42, "evt_"+s, -7)
			if err != nil {
				t.Fatal(err)
			}
			wantRaw, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.AppendJSON([]byte("prefix")); string(got) != "prefix"+string(wantRaw) {
				t.Errorf("string %q:\n got %s\nwant %s", s, got[len("prefix"):], wantRaw)
			}
			if hint := e.JSONSizeHint(); hint > len(wantRaw) || escapeFree(s) && hint != len(wantRaw) {
				t.Errorf("string %q: size hint %d for %d bytes", s, hint, len(wantRaw))
			}
		}
	}
	for _, seq := range []int64{0, 9, 10, -1, -10, 1 << 62, -1 << 63} {
		e := events.Envelope{RunID: "r", Seq: seq, OccurredAt: seq, EmittedAt: -seq, Payload: []byte(`{}`)}
		if raw := e.AppendJSON(nil); e.JSONSizeHint() != len(raw) {
			t.Errorf("seq %d: size hint %d for %d bytes", seq, e.JSONSizeHint(), len(raw))
		}
	}
	bare := events.Envelope{RunID: "r"}
	if want, err := json.Marshal(bare); err != nil || string(bare.AppendJSON(nil)) != string(want) {
		t.Errorf("a nil payload:\n got %s\nwant %s (%v)", bare.AppendJSON(nil), want, err)
	}
}

// escapeFree says whether json.Marshal writes s as it is, between quotes.
func escapeFree(s string) bool {
	raw, _ := json.Marshal(s)
	return len(raw) == len(s)+2
}
