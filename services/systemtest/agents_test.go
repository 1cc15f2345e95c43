package systemtest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// The end-to-end tests of capabilities (issue 16): each agent's manifest and
// a run's frozen snapshot, through the HTTP API.

func TestAgentManifestListsTheProfilesToolsWithTheirSchemas(t *testing.T) {
	t.Parallel()
	coder := profile.Profile{ID: "coder", Model: profile.ModelScripted, Tools: []string{"shell", "write_file"},
		Script: []profile.Turn{{Text: "ok"}}}
	chat := profile.Profile{ID: "chat", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "ok"}},
		RunOptions: profile.RunOptions{ApprovalModes: []events.ApprovalMode{events.ApprovalAsk, events.ApprovalBypass}}}
	_, st, _ := agentEnv(t, coder, chat)
	c := apiOf(t, st)
	all, err := c.Agents(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ids := agentIDs(all); !slices.Contains(ids, "chat") || !slices.Contains(ids, "coder") {
		t.Fatalf("agents %v, want chat and coder among them", ids)
	}
	got, err := c.GetAgent(t.Context(), "coder")
	if err != nil {
		t.Fatal(err)
	}
	// The engine adds read_file_part to a profile with tools.
	want, err := tools.Builtin(tools.Options{}).Specs([]string{"shell", "write_file", tools.ReadFilePartName})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) != len(want) {
		t.Fatalf("tools %+v, want %d", got.Tools, len(want))
	}
	for i, w := range want {
		g := got.Tools[i]
		if g.Name != w.Name || g.Description != w.Description || !sameJSON(t, g.Parameters, w.Parameters) {
			t.Errorf("tool %d: %s %q %s, want %s %q %s", i, g.Name, g.Description, g.Parameters, w.Name, w.Description, w.Parameters)
		}
	}
	// A profile without runOptions allows the safe modes only, and no
	// network when its sandbox has none.
	if !slices.Equal(got.Options.ApprovalMode, []events.ApprovalMode{events.ApprovalAsk, events.ApprovalAuto}) ||
		!slices.Equal(got.Options.SafetyMode, []events.SafetyMode{events.SafetyReadOnly, events.SafetyWorkspaceWrite}) ||
		!got.Options.WorkingDirectory || !slices.Equal(got.Options.NetworkAccess, []bool{false}) {
		t.Errorf("options %+v, want the default bounds of a profile", got.Options)
	}
	if got.Defaults.SafetyMode != events.SafetyWorkspaceWrite || got.Defaults.ApprovalMode != events.ApprovalAsk {
		t.Errorf("defaults %+v, want workspace-write and ask", got.Defaults)
	}
	if got.Defaults.NetworkAccess == nil || *got.Defaults.NetworkAccess {
		t.Errorf("defaults %+v, want the profile's network (off)", got.Defaults)
	}
	if !slices.Equal(got.InputContentTypes, []string{"text"}) {
		t.Errorf("input content types %v", got.InputContentTypes)
	}
	for _, op := range []string{"steer", "clarification", "follow_up", "cancel", "approve", "deny", "compact", "session_message", "interrupt"} {
		if !slices.Contains(got.ControlOperations, op) {
			t.Errorf("control operations %v lack %s", got.ControlOperations, op)
		}
	}
	if noTools, err := c.GetAgent(t.Context(), "chat"); err != nil || len(noTools.Tools) != 0 ||
		!slices.Equal(noTools.Options.ApprovalMode, []events.ApprovalMode{events.ApprovalAsk, events.ApprovalBypass}) {
		t.Errorf("chat: %+v %v, want no tools and the approval modes its profile lists", noTools, err)
	}
	if _, err := c.GetAgent(t.Context(), "nobody"); !isProblem(err, 404, "not_found") {
		t.Errorf("an unknown agent: %v, want 404", err)
	}
}

func TestSnapshotEndpointReturnsTheFrozenSnapshot(t *testing.T) {
	t.Parallel()
	// blocker holds its sandbox key in a long tool call, so the next run of
	// the key stays queued, with no snapshot, until the first is cancelled.
	blocker := profile.Profile{ID: "blocker", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{ToolCalls: call1("shell", `{"command":"sleep 60"}`)}, {Text: "Slept."}}}
	_, st, _ := agentEnv(t, blocker)
	c := apiOf(t, st)
	first := create(t, st, "blocker", "hold the key", "snap-first").RunID
	eventually.Succeeds(t, 10*time.Second, "the first run's tool runs", func() error {
		if n := countType(t, st, first, events.ItemStarted); n < 2 {
			return fmt.Errorf("%d items started", n)
		}
		return nil
	})
	second := create(t, st, "blocker", "wait for the key", "snap-second").RunID
	waitStatus(t, st, second, "queued", 10*time.Second)
	if _, err := c.GetRunSnapshot(t.Context(), second); !isProblem(err, 404, "not_found") {
		t.Errorf("the queued run's snapshot: %v, want 404 not_found", err)
	}
	snap, err := c.GetRunSnapshot(t.Context(), first)
	if err != nil {
		t.Fatal(err)
	}
	frozen := eventsOf(t, st, first, events.CapabilitySnapshotFrozen)
	if len(frozen) != 1 {
		t.Fatalf("%d snapshot_frozen events", len(frozen))
	}
	p := payloadOf[events.SnapshotFrozenPayload](t, frozen[0])
	if snap.RunID != first || snap.Seq != frozen[0].Seq || snap.Hash != p.Hash || !sameJSON(t, snap.Snapshot, p.Snapshot) {
		t.Errorf("snapshot %s seq %d %s, want the log's seq %d %s", snap.RunID, snap.Seq, snap.Hash, frozen[0].Seq, p.Hash)
	}
	if _, err := c.WithToken(otherToken).GetRunSnapshot(t.Context(), first); !isProblem(err, 404, "run_not_found") {
		t.Errorf("another tenant's read: %v, want 404 run_not_found", err)
	}
	cancelRun(t, st, first, "done holding", "snap-cancel")
	eventually.Succeeds(t, 20*time.Second, "the second run's snapshot", func() error {
		_, err := c.GetRunSnapshot(t.Context(), second)
		return err
	})
	cancelRun(t, st, second, "done", "snap-cancel-2")
}

func agentIDs(as []client.Agent) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.AgentID)
	}
	slices.Sort(out)
	return out
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
