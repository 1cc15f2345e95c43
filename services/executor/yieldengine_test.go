package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/executor"
)

// gateEngine plays each run by its input. "ask": the run asks for the
// approval of a tool call and pauses; once resumed it completes the call
// and the run ("ask-fail": given its key after a resume, its engine fails). "hold": the run works until the test opens the gate (again
// after a takeover), then completes. Anything else completes at once.
type gateEngine struct {
	gate chan struct{}
}

func newGateEngine() *gateEngine { return &gateEngine{gate: make(chan struct{})} }

func (e *gateEngine) open() { close(e.gate) }

func (e *gateEngine) Implements(what string) bool {
	return what == string(commands.SubmitApprovalDecision)
}

func (e *gateEngine) Snapshot(p profile.Profile, grants []events.PermissionGrant) (profile.Snapshot, error) {
	return profile.NewSnapshot(p, nil, grants)
}

func (e *gateEngine) Execute(ctx context.Context, run *executor.Run, _ profile.Profile) error {
	if st := run.State(); st.Requeued && st.Input.Content == "ask-fail" {
		return errors.New("the engine failed before resuming the run")
	}
	if run.Waiting() {
		if resumed, err := run.Resume(ctx, nil); err != nil || !resumed {
			return err
		}
	}
	switch run.State().Input.Content {
	case "ask", "ask-fail":
		return e.ask(ctx, run)
	case "hold":
		id := events.NewID("itm")
		if _, err := run.Append(ctx, executor.AppendOptions{}, assistantStarted(id)); err != nil {
			return err
		}
		select {
		case <-e.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		_, err := run.Append(ctx, executor.AppendOptions{}, assistantCompleted(id, "held"), runCompleted)
		return err
	default:
		_, err := run.Append(ctx, executor.AppendOptions{}, runCompleted)
		return err
	}
}

// askItem is the id of the item an "ask" run awaits approval for.
var askItem = events.DerivedID("itm", "ask")

// ask pauses the run on its first pass; on the next (resumed) it completes.
func (e *gateEngine) ask(ctx context.Context, run *executor.Run) error {
	if _, asked := run.State().Item(askItem); !asked {
		_, err := run.Append(ctx, executor.AppendOptions{},
			events.Draft{Type: events.ItemStarted, ItemID: askItem, Payload: events.ItemStartedPayload{ItemType: events.ItemToolCall}},
			events.Draft{Type: events.ItemAwaitingApproval, ItemID: askItem, Payload: events.ItemAwaitingApprovalPayload{
				ItemType: events.ItemToolCall, ToolName: "deploy", RuleID: "deploy"}},
			events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{
				PauseReason: events.PauseAwaitingApproval, ItemIDs: []string{askItem}}})
		return err
	}
	var drafts []events.Draft
	for _, it := range run.State().OpenItems() {
		drafts = append(drafts, events.Draft{Type: events.ItemCompleted, ItemID: it.ID, Payload: events.ItemCompletedPayload{
			ItemType: it.Type, Status: events.ItemStatusCompleted}})
	}
	_, err := run.Append(ctx, executor.AppendOptions{}, append(drafts, runCompleted)...)
	return err
}

// gateExecutors starts executors driving engine e; each runs until the
// test ends or it is killed.
type gateExecutors struct {
	h *harness
	e *gateEngine
}

func (g *gateExecutors) start(name string) *executor.Executor {
	g.h.t.Helper()
	log := zaptest.NewLogger(g.h.t, zaptest.Level(zap.ErrorLevel)).Named(name)
	ex, err := executor.New(executor.Config{Kafka: g.h.kcfg, ID: name, CommandKeys: g.h.keys}, g.e, g.h.cat, log)
	if err != nil {
		g.h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ex.Run(ctx) }()
	g.h.t.Cleanup(func() { cancel(); <-done })
	return ex
}

// approve allows the item the run awaits approval for.
func approve(t *testing.T, runID, key string) commands.Envelope {
	t.Helper()
	c, err := commands.New(commands.SubmitApprovalDecision, commands.Header{RunID: runID, PlatformSessionID: "sess-1",
		TenantID: "acme", Actor: events.Actor{Type: "user", ID: "u1"}, IdempotencyKey: key},
		commands.SubmitApprovalDecisionPayload{ItemID: askItem, Decision: events.DecisionAllow, Scope: events.ScopeItem})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// positions lists the places a run recorded in its key's queue.
func positions(t *testing.T, h *harness, runID string) []int {
	t.Helper()
	evs, err := readRun(h, runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range evs {
		if e.Type == events.RunQueued {
			var p events.RunQueuedPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			out = append(out, p.Position)
		}
	}
	return out
}

// keyTurns walks the log of runs (one sandbox key, one partition) in log
// order: it fails when two of them run at once, and returns the runs in the
// order they got the key (started or resumed).
func keyTurns(t *testing.T, h *harness, runs ...string) []string {
	t.Helper()
	mine := map[string]bool{}
	for _, id := range runs {
		mine[id] = true
	}
	all, err := readAll(h)
	if err != nil {
		t.Fatal(err)
	}
	running, turns := "", []string(nil)
	for _, e := range all {
		if !mine[e.RunID] {
			continue
		}
		switch to, ok := events.StatusAfter(e.Type); {
		case !ok:
		case to == events.StatusRunning:
			if running != "" && running != e.RunID {
				t.Fatalf("%s got the key (%s) while %s was running", e.RunID, e.Type, running)
			}
			running, turns = e.RunID, append(turns, fmt.Sprintf("%s:%s", e.RunID, e.Type))
		case running == e.RunID:
			running = ""
		}
	}
	return turns
}
