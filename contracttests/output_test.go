package contracttests_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// toolItem returns the drafts of a shell item that streamed deltas, then
// completed.
func toolItem(deltas ...events.ItemDeltaPayload) []events.Draft {
	data, _ := json.Marshal(events.ToolCallData{ToolCallID: "call_1", ToolName: "shell"})
	ds := []events.Draft{{Type: events.ItemStarted, ItemID: "itm_tool", Payload: events.ItemStartedPayload{
		ItemType: events.ItemCommandExecution, Data: data}}}
	for _, d := range deltas {
		ds = append(ds, events.Draft{Type: events.ItemDelta, ItemID: "itm_tool", Payload: d})
	}
	return append(ds, events.Draft{Type: events.ItemCompleted, ItemID: "itm_tool", Payload: events.ItemCompletedPayload{
		ItemType: events.ItemCommandExecution, Content: "exit code: 0"}})
}

// snapshot freezes a profile whose tool items may stream limit bytes.
func snapshot(t *testing.T, limit int) events.Draft {
	t.Helper()
	s, err := profile.NewSnapshot(profile.Profile{ID: "demo", Limits: profile.Limits{MaxStreamedOutputBytes: limit}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	frozen, err := s.Freeze()
	if err != nil {
		t.Fatal(err)
	}
	return events.Draft{Type: events.CapabilitySnapshotFrozen, Payload: frozen}
}

func TestCheckStreamedOutput(t *testing.T) {
	t.Parallel()
	full := strings.Repeat("x", profile.DefaultMaxStreamedOutputBytes-profile.DeltaEnvelopeBytes)
	marker := events.ItemDeltaPayload{Delta: "[streaming stopped]", Truncated: true, OmittedBytes: 40 << 20}
	tests := []struct {
		name   string
		drafts []events.Draft
		want   string // "" passes; else a fragment of the violation
	}{
		{"a tool streams up to the default cap, then the marker",
			toolItem(events.ItemDeltaPayload{Delta: full}, marker), ""},
		{"a tool streams past the default cap",
			toolItem(events.ItemDeltaPayload{Delta: full}, events.ItemDeltaPayload{Delta: "y"}), "over the limit"},
		{"the snapshot's cap applies",
			append([]events.Draft{snapshot(t, 310)}, toolItem(events.ItemDeltaPayload{Delta: "12345678901"})...), "over the limit of 310"},
		{"each delta's envelope counts",
			append([]events.Draft{snapshot(t, 1000)}, toolItem(events.ItemDeltaPayload{Delta: "a"}, events.ItemDeltaPayload{Delta: "b"},
				events.ItemDeltaPayload{Delta: "c"}, events.ItemDeltaPayload{Delta: "d"})...), "over the limit of 1000"},
		{"nothing streams after the marker",
			toolItem(events.ItemDeltaPayload{Delta: "a"}, marker, events.ItemDeltaPayload{Delta: "b"}), "after the truncation marker"},
		{"a marker names what it left out",
			toolItem(events.ItemDeltaPayload{Delta: "a", Truncated: true}), "no omitted bytes"},
		{"model text is not a tool's output",
			[]events.Draft{itemStarted, {Type: events.ItemDelta, ItemID: "itm_1", Payload: events.ItemDeltaPayload{Delta: full + full}}, itemDone}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log := append([]events.Draft{accepted, started}, tc.drafts...)
			err := contracttests.CheckStreamedOutput(seal(t, seq(runA, log...)))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected violation: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("violation %v, want one saying %q", err, tc.want)
			}
		})
	}
}
