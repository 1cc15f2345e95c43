package executor_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// withOptions is c with the create's options replaced by o.
func withOptions(t *testing.T, c commands.Envelope, o events.RunOptions) commands.Envelope {
	t.Helper()
	var p commands.CreateRunPayload
	if err := json.Unmarshal(c.Payload, &p); err != nil {
		t.Fatal(err)
	}
	p.Options = &o
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	c.Payload = raw
	return c
}

// TestRunOptionsCheckedAtStart: the executor freezes the effective options
// into the snapshot, and a create whose options the profile does not allow
// (one that did not pass the API, or a profile reloaded since) starts and
// fails rather than run with less confinement than its profile allows.
func TestRunOptionsCheckedAtStart(t *testing.T) {
	t.Parallel()
	h := newHarness(t, profile.Profile{ID: "strict", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "ok"}}})
	h.startExecutor("ex-1", nil)
	ok := withOptions(t, createRun(t, "acme", "opt-ok", "strict", "hi"),
		events.RunOptions{WorkingDirectory: "src", SafetyMode: events.SafetyReadOnly})
	bypass := withOptions(t, createRun(t, "acme", "opt-bypass", "strict", "hi"), events.RunOptions{ApprovalMode: events.ApprovalBypass})
	h.send(ok)
	h.send(bypass)
	states := h.waitFor("both runs ended", func(m map[string]events.RunState) bool {
		return m[ok.RunID].Status == events.StatusCompleted && m[bypass.RunID].Status == events.StatusFailed
	})
	if code := states[bypass.RunID].ErrorCode; code != string(events.FailInternal) {
		t.Errorf("the bypass run failed with %q, want internal", code)
	}
	snap, err := profile.SnapshotOf(runEvents(t, h, ok.RunID))
	if err != nil {
		t.Fatal(err)
	}
	want := events.RunOptions{WorkingDirectory: "src", SafetyMode: events.SafetyReadOnly, ApprovalMode: events.ApprovalAsk}
	got := snap.Options
	if got.WorkingDirectory != want.WorkingDirectory || got.SafetyMode != want.SafetyMode || got.ApprovalMode != want.ApprovalMode ||
		got.NetworkAccess == nil || *got.NetworkAccess {
		t.Fatalf("frozen options %+v, want %+v with the network off", got, want)
	}
	for _, e := range runEvents(t, h, bypass.RunID) {
		if e.Type == events.RunFailed && !strings.Contains(string(e.Payload), "approvalMode bypass") {
			t.Errorf("the failure does not name the option: %s", e.Payload)
		}
	}
}

// runEvents are the committed events of runID.
func runEvents(t *testing.T, h *harness, runID string) []events.Envelope {
	t.Helper()
	all, err := contracttests.KafkaSource(h.kcfg)(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Envelope
	for _, e := range all {
		if e.RunID == runID {
			out = append(out, e)
		}
	}
	return out
}
