package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api"
)

// sessionWithRun puts a session whose latest run ended ago into the read
// model, and returns that run's id.
func sessionWithRun(e *env, session string, ago time.Duration) string {
	runID := events.NewID("run")
	sk, _ := json.Marshal(events.SandboxKey{TenantID: tenantA, WorkspaceID: "default", AgentID: "coder", OwnerID: tenantA})
	at := time.Now().Add(-ago)
	e.store.addRun(api.RunRecord{RunID: runID, TenantID: tenantA, PlatformSessionID: session, AgentID: "coder",
		Status: string(events.StatusCompleted), SandboxKey: sk, LastSeq: 5, CreatedAt: at.Add(-time.Minute), UpdatedAt: at})
	e.store.mu.Lock()
	defer e.store.mu.Unlock()
	if e.store.sessions == nil {
		e.store.sessions = map[string]api.SessionRecord{}
	}
	e.store.sessions[tenantA+"/"+session] = api.SessionRecord{TenantID: tenantA, PlatformSessionID: session,
		FirstRunID: runID, LastRunID: runID, LastRunStatus: string(events.StatusCompleted), RunCount: 1,
		FirstRunAt: at.Add(-time.Minute), LastActivityAt: at}
	return runID
}

// sent is the one command the API sent.
func sent(t *testing.T, e *env) commands.Envelope {
	t.Helper()
	envs := e.sender.envelopes()
	if len(envs) != 1 {
		t.Fatalf("%d commands sent, want 1", len(envs))
	}
	return envs[0]
}

// TestSessionMessageNamesTheSessionsLatestRun: the API sends a session
// message (intent auto) naming the read model's latest run of the session;
// the executor routes it from there.
func TestSessionMessageNamesTheSessionsLatestRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	last := sessionWithRun(e, "sess-1", time.Hour)
	e.do(t, "POST", "/v1/sessions/sess-1/messages?wait=0", tokenA, map[string]any{"content": "more"},
		"Idempotency-Key", "m-1").want(t, http.StatusAccepted)
	c := sent(t, e)
	p, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	if in, ok := p.(*commands.AppendUserInputPayload); !ok || in.Intent != commands.IntentAuto || c.RunID != last ||
		c.PlatformSessionID != "sess-1" || c.IdempotencyKey != "m-1" {
		t.Fatalf("sent %s %+v to %s, want a session message to %s", c.Type, p, c.RunID, last)
	}
}

// TestSessionMessageAfterALongEndedRunCreatesItsChild: when the session's
// latest run ended longer ago than half of RememberFinished, the executor
// may have forgotten it: the message is sent as the create of its child.
func TestSessionMessageAfterALongEndedRunCreatesItsChild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	last := sessionWithRun(e, "sess-old", 8*day)
	e.do(t, "POST", "/v1/sessions/sess-old/messages?wait=0", tokenA, map[string]any{"content": "still there?"},
		"Idempotency-Key", "m-old").want(t, http.StatusAccepted)
	c := sent(t, e)
	p, err := c.Validate()
	if err != nil {
		t.Fatal(err)
	}
	cr, ok := p.(*commands.CreateRunPayload)
	if !ok || cr.ParentRunID != last || cr.AgentID != "coder" || cr.Input.Content != "still there?" ||
		c.PlatformSessionID != "sess-old" || c.RunID == last {
		t.Fatalf("sent %s %+v to %s, want the create of a child of %s", c.Type, p, c.RunID, last)
	}
}

// TestSessionMessageIntentFromTheReadModel: an answer that comes from the
// commands read model, which does not keep what a message became, reads it
// from the outcome event at the row's seq.
func TestSessionMessageIntentFromTheReadModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	last := sessionWithRun(e, "sess-rm", time.Hour)
	e.sender.decide = func(c commands.Envelope, row *api.CommandRecord) {
		row.Seq = 6
		env, _ := json.Marshal(map[string]any{"type": events.CommandAccepted, "payload": events.CommandAcceptedPayload{
			CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, Intent: commands.IntentQueued}})
		e.store.addEvent(api.EventRecord{RunID: last, Seq: 6, Type: string(events.CommandAccepted), TenantID: tenantA,
			CommandID: c.CommandID, Envelope: env})
	}
	var got struct {
		Intent, RunID, Outcome string
	}
	r := e.do(t, "POST", "/v1/sessions/sess-rm/messages?wait=5s", tokenA, map[string]any{"content": "and this"},
		"Idempotency-Key", "m-rm").want(t, http.StatusAccepted)
	if err := json.Unmarshal(r.raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Intent != commands.IntentQueued || got.RunID != last || got.Outcome != "accepted" {
		t.Fatalf("answer %+v, want queued on %s", got, last)
	}
}
