package events_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

const runID = "run_01J8XK8A1B2C3D4E5F6G7H8J9K"

// validPayload returns a payload of type t that passes Fold's payload checks.
func validPayload(t events.Type) any {
	switch t {
	case events.RunAccepted:
		return events.RunAcceptedPayload{AgentID: "demo", Input: events.UserInput{Content: "hi"}, IdempotencyKey: "k"}
	case events.RunPaused:
		return events.RunPausedPayload{PauseReason: events.PauseAwaitingApproval}
	case events.RunFailed:
		return events.RunFailedPayload{ErrorCode: events.FailInternal}
	case events.ItemStarted:
		return events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}
	case events.ApprovalDecisionSubmitted:
		return events.ApprovalDecisionPayload{Decision: events.DecisionAllow, Scope: events.ScopeItem}
	case events.PermissionGrantApplied:
		return events.PermissionGrantPayload{GrantID: "grt_1", Scope: events.ScopeRun, ToolName: "shell", RuleID: "network"}
	case events.PermissionGrantRevoked:
		return events.PermissionGrantRevokedPayload{GrantID: "grt_1", Scope: events.ScopeRun, ToolName: "shell", RuleID: "network"}
	case events.CapabilitySnapshotFrozen:
		return events.SnapshotFrozenPayload{Hash: "sha256:00", Snapshot: json.RawMessage(`{"pauseTtlMs":60000}`)}
	case events.RunQueued:
		return events.RunQueuedPayload{Position: 1}
	case events.SandboxAttached:
		return events.SandboxAttachedPayload{Provider: "local-process", SandboxID: "lp-1"}
	}
	p, _ := events.NewPayload(t)
	return p
}

func env(t *testing.T, seq int64, typ events.Type, item, cmd string, payload any) events.Envelope {
	t.Helper()
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return events.Envelope{EventID: events.NewID("evt"), RunID: runID, Seq: seq, SchemaVersion: "v1", Type: typ,
		OccurredAt: 1, EmittedAt: 1, TenantID: "acme", ItemID: item, CommandID: cmd, Payload: raw}
}

// stateIn builds a run state in status s, with an open item "itm_open" when
// the state allows items, by folding a legal history.
func stateIn(t *testing.T, s events.Status) events.RunState {
	t.Helper()
	return stateWith(t, s, true)
}

func stateWith(t *testing.T, s events.Status, openItem bool) events.RunState {
	t.Helper()
	path := map[events.Status][]events.Type{
		events.StatusCreated:   nil,
		events.StatusQueued:    {events.RunAccepted},
		events.StatusRunning:   {events.RunAccepted, events.RunStarted, events.ItemStarted},
		events.StatusPaused:    {events.RunAccepted, events.RunStarted, events.ItemStarted, events.RunPaused},
		events.StatusCompleted: {events.RunAccepted, events.RunStarted, events.RunCompleted},
		events.StatusFailed:    {events.RunAccepted, events.RunStarted, events.RunFailed},
		events.StatusCancelled: {events.RunAccepted, events.RunCancelled},
		events.StatusExpired:   {events.RunAccepted, events.RunStarted, events.RunPaused, events.RunExpired},
	}[s]
	var st events.RunState
	seq := int64(0)
	for _, typ := range path {
		if typ == events.ItemStarted && !openItem {
			continue
		}
		seq++
		item := ""
		if typ == events.ItemStarted {
			item = "itm_open"
		}
		var err error
		st, err = events.Fold(st, env(t, seq, typ, item, "", validPayload(typ)))
		if err != nil {
			t.Fatalf("building %s: %v", s, err)
		}
	}
	if st.CurrentStatus() != s {
		t.Fatalf("built %s, want %s", st.CurrentStatus(), s)
	}
	return st
}

// legal is the expected transition table: for each event type, the states
// that accept it.
var legal = map[events.Type][]events.Status{
	events.RunAccepted:               {events.StatusCreated},
	events.RunStarted:                {events.StatusQueued},
	events.RunPaused:                 {events.StatusRunning},
	events.RunResumed:                {events.StatusPaused},
	events.RunCompleted:              {events.StatusRunning},
	events.RunFailed:                 {events.StatusRunning},
	events.RunCancelled:              {events.StatusQueued, events.StatusRunning, events.StatusPaused},
	events.RunExpired:                {events.StatusPaused},
	events.RunCheckpointRestored:     {events.StatusQueued, events.StatusRunning, events.StatusPaused},
	events.CommandAccepted:           {events.StatusQueued, events.StatusRunning, events.StatusPaused},
	events.CommandRejected:           events.Statuses(),
	events.CommandNoEffect:           events.Statuses(),
	events.CommandDuplicate:          events.Statuses(),
	events.CommandApplied:            {events.StatusQueued, events.StatusRunning, events.StatusPaused, events.StatusCompleted, events.StatusFailed, events.StatusCancelled, events.StatusExpired},
	events.ItemStarted:               {events.StatusRunning},
	events.ItemDelta:                 {events.StatusRunning},
	events.ItemCompleted:             {events.StatusRunning, events.StatusPaused},
	events.ItemFailed:                {events.StatusRunning, events.StatusPaused},
	events.ItemAwaitingApproval:      {events.StatusRunning},
	events.ApprovalDecisionSubmitted: {events.StatusRunning, events.StatusPaused},
	events.PermissionGrantApplied:    {events.StatusQueued, events.StatusRunning, events.StatusPaused},
	events.ContextCompacted:          {events.StatusRunning, events.StatusPaused},
	events.CapabilitySnapshotFrozen:  {events.StatusQueued, events.StatusRunning},
	events.PermissionGrantRevoked:    {events.StatusQueued, events.StatusRunning, events.StatusPaused, events.StatusCompleted, events.StatusFailed, events.StatusCancelled, events.StatusExpired},
	// From queued: a position update; from paused: a resumed run waits for
	// its sandbox key (TestRequeuedRunResumesNotStarts).
	events.RunQueued:       {events.StatusQueued, events.StatusPaused},
	events.SandboxAttached: {events.StatusRunning},
}

func TestFoldEveryStateAndEventType(t *testing.T) {
	t.Parallel()
	if len(legal) != len(events.Catalog()) {
		t.Fatalf("transition table covers %d types, catalog has %d", len(legal), len(events.Catalog()))
	}
	for _, s := range events.Statuses() {
		for _, typ := range events.Catalog() {
			t.Run(string(s)+"/"+string(typ), func(t *testing.T) {
				t.Parallel()
				_, lifecycle := events.StatusAfter(typ)
				st := stateWith(t, s, !lifecycle)
				item := ""
				switch typ {
				case events.ItemStarted:
					item = "itm_new"
				case events.ItemDelta, events.ItemCompleted, events.ItemFailed, events.ItemAwaitingApproval:
					item = "itm_open"
				}
				e := env(t, st.LastSeq+1, typ, item, "cmd_x", validPayload(typ))
				next, err := events.Fold(st, e)
				want := contains(legal[typ], s)
				if want && err != nil {
					t.Fatalf("legal %s in %s refused: %v", typ, s, err)
				}
				if !want {
					var ite *events.IllegalTransitionError
					if !errors.As(err, &ite) {
						t.Fatalf("illegal %s in %s: got %v, want IllegalTransitionError", typ, s, err)
					}
					if next.LastSeq != st.LastSeq {
						t.Fatalf("refused event changed the state")
					}
					return
				}
				if to, ok := events.StatusAfter(typ); ok && next.Status != to {
					t.Fatalf("%s led to %s, want %s", typ, next.Status, to)
				}
				if next.LastSeq != e.Seq {
					t.Fatalf("LastSeq %d, want %d", next.LastSeq, e.Seq)
				}
			})
		}
	}
}

func contains(ss []events.Status, s events.Status) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestRunCannotEndWithOpenItems(t *testing.T) {
	t.Parallel()
	st := stateIn(t, events.StatusRunning) // has itm_open
	for _, typ := range []events.Type{events.RunCompleted, events.RunFailed, events.RunCancelled} {
		var ite *events.IllegalTransitionError
		if _, err := events.Fold(st, env(t, st.LastSeq+1, typ, "", "", validPayload(typ))); !errors.As(err, &ite) {
			t.Errorf("%s with an open item: got %v", typ, err)
		}
	}
}

func TestFoldRejectsGapsDuplicatesAndForeignRuns(t *testing.T) {
	t.Parallel()
	st := stateIn(t, events.StatusQueued)
	var gap *events.SeqGapError
	if _, err := events.Fold(st, env(t, 3, events.RunStarted, "", "", nil)); !errors.As(err, &gap) || gap.Expected != 2 || gap.Actual != 3 {
		t.Fatalf("gap: got %v", err)
	}
	if _, err := events.Fold(st, env(t, 1, events.RunStarted, "", "", nil)); !errors.As(err, &gap) {
		t.Fatalf("duplicate seq: got %v", err)
	}
	other := env(t, 2, events.RunStarted, "", "", nil)
	other.RunID = "run_01J8XK8A1B2C3D4E5F6G7H8J9Z"
	var ite *events.IllegalTransitionError
	if _, err := events.Fold(st, other); !errors.As(err, &ite) {
		t.Fatalf("foreign run: got %v", err)
	}
	if _, err := events.Fold(st, env(t, 2, "runtime.run.teleported", "", "", nil)); !errors.Is(err, events.ErrUnknownType) {
		t.Fatalf("unknown type: got %v", err)
	}
}

func TestFoldPayloadChecks(t *testing.T) {
	t.Parallel()
	running := stateWith(t, events.StatusRunning, false)
	var pe *events.PayloadError
	cases := []events.Envelope{
		env(t, running.LastSeq+1, events.RunPaused, "", "", events.RunPausedPayload{PauseReason: "napping"}),
		env(t, running.LastSeq+1, events.RunFailed, "", "", events.RunFailedPayload{}),
		env(t, running.LastSeq+1, events.ItemStarted, "", "", events.ItemStartedPayload{ItemType: events.ItemPlan}),
		env(t, running.LastSeq+1, events.CommandAccepted, "", "", events.CommandAcceptedPayload{CommandType: "CancelRun"}),
		env(t, running.LastSeq+1, events.SandboxAttached, "", "", events.SandboxAttachedPayload{Provider: "p"}),
	}
	for _, e := range cases {
		if _, err := events.Fold(running, e); !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want PayloadError", e.Type, err)
		}
	}
	streaming := stateIn(t, events.StatusRunning)
	bad := env(t, streaming.LastSeq+1, events.ItemDelta, "itm_open", "", nil)
	bad.Payload = json.RawMessage(`{"delta": 5}`)
	if _, err := events.Fold(streaming, bad); !errors.As(err, &pe) {
		t.Errorf("undecodable payload: got %v", err)
	}
}

func TestPendingCommandsAndIdempotencyAreFolded(t *testing.T) {
	t.Parallel()
	st := stateIn(t, events.StatusRunning)
	acc := env(t, st.LastSeq+1, events.CommandAccepted, "", "cmd_a",
		events.CommandAcceptedPayload{CommandType: "CancelRun", IdempotencyKey: "cancel-1", Actor: &events.Actor{Type: "user", ID: "bob"}})
	st, err := events.Fold(st, acc)
	if err != nil || len(st.Pending) != 1 || st.Commands["cancel-1"].Outcome != "accepted" {
		t.Fatalf("accepted: %v %+v", err, st.Pending)
	}
	if a := st.Pending[0].Actor; a == nil || *a != (events.Actor{Type: "user", ID: "bob"}) {
		t.Fatalf("pending command's actor = %+v, want the accepted one's", a)
	}
	if _, err := events.Fold(st, env(t, st.LastSeq+1, events.CommandAccepted, "", "cmd_a", events.CommandAcceptedPayload{CommandType: "CancelRun"})); err == nil {
		t.Fatal("the same command accepted twice")
	}
	st, err = events.Fold(st, env(t, st.LastSeq+1, events.CommandApplied, "", "cmd_a",
		events.CommandAppliedPayload{CommandType: "CancelRun", IdempotencyKey: "cancel-1"}))
	if err != nil || len(st.Pending) != 0 || st.Commands["cancel-1"].Outcome != "applied" {
		t.Fatalf("applied: %v %+v", err, st)
	}
	st, err = events.Fold(st, env(t, st.LastSeq+1, events.CommandRejected, "", "cmd_b",
		events.CommandRejectedPayload{CommandType: "CancelRun", IdempotencyKey: "cancel-1", Code: "x"}))
	if err != nil || st.Commands["cancel-1"].CommandID != "cmd_a" {
		t.Fatalf("a later command must not take over an idempotency key: %v %+v", err, st.Commands)
	}
}

func TestIDs(t *testing.T) {
	t.Parallel()
	id := events.NewID("run")
	if !events.ValidID("run", id) || events.ValidID("cmd", id) {
		t.Fatalf("NewID %q", id)
	}
	a, b := events.DerivedID("run", "acme", "k"), events.DerivedID("run", "acme", "k")
	if a != b || !events.ValidID("run", a) || a == events.DerivedID("run", "acme", "k2") || a == events.DerivedID("run", "acm", "ek") {
		t.Fatalf("DerivedID not deterministic or not separating parts: %s %s", a, b)
	}
	if !events.ValidID("run", "run_0190b2a4-7c3e-7cc0-9a1e-1f2a3b4c5d6e") || events.ValidID("run", "run_short") {
		t.Fatal("ValidID")
	}
}
