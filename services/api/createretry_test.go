package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
)

const day = 24 * time.Hour

// createdRun is a create the fake executor accepted under key, and its run
// put into the read model as the projector leaves it: in status, its last
// event lastEventAgo ago, with runtime.run.accepted at seq 1 unless
// withoutAccepted.
func createdRun(t *testing.T, e *env, key, status string, lastEventAgo time.Duration, withoutAccepted bool) client.CommandResult {
	t.Helper()
	first := e.do(t, "POST", "/v1/runs", tokenA, createBody("hi"), "Idempotency-Key", key).
		want(t, http.StatusAccepted).command(t)
	if first.Outcome != client.OutcomeAccepted {
		t.Fatalf("first create: %+v", first)
	}
	sk, _ := json.Marshal(events.SandboxKey{TenantID: tenantA, WorkspaceID: "default", AgentID: "coder", OwnerID: tenantA})
	now := time.Now()
	e.store.addRun(api.RunRecord{RunID: first.RunID, TenantID: tenantA, AgentID: "coder", Status: status,
		SandboxKey: sk, LastSeq: 5, CreatedAt: now.Add(-lastEventAgo - time.Minute), UpdatedAt: now.Add(-lastEventAgo)})
	if !withoutAccepted {
		e.store.addEvent(api.EventRecord{RunID: first.RunID, Seq: 1, Type: string(events.RunAccepted), TenantID: tenantA,
			CommandID: first.CommandID, OccurredAt: now.Add(-lastEventAgo - time.Minute).UnixMilli()})
	}
	return first
}

// retry repeats the create under key.
func retry(t *testing.T, e *env, key string) response {
	t.Helper()
	return e.do(t, "POST", "/v1/runs", tokenA, createBody("hi"), "Idempotency-Key", key)
}

// TestRetryOfARunEndedLongAgoIsAnsweredFromTheReadModel: 8 days after a run
// ended (past half of the 7-day window), a retry of its create is not sent;
// the answer is the executor's duplicate, read from the read model.
func TestRetryOfARunEndedLongAgoIsAnsweredFromTheReadModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first := createdRun(t, e, "req-old", string(events.StatusCompleted), 8*day, false)
	got := retry(t, e, "req-old").want(t, http.StatusAccepted).command(t)
	if n := len(e.sender.envelopes()); n != 1 {
		t.Fatalf("%d commands sent, want only the first create", n)
	}
	want := client.CommandResult{RunID: first.RunID, CommandID: first.CommandID, Outcome: client.OutcomeDuplicate,
		Code: string(events.CodeDuplicateCommand), OriginalCommandID: first.CommandID,
		OriginalOutcome: client.OutcomeAccepted, Detail: got.Detail}
	if got != want || !strings.Contains(got.Detail, first.CommandID) {
		t.Fatalf("answer %+v, want %+v", got, want)
	}
}

// TestRetryOfARunEndedLongAgoWithoutItsCreateIs409: when the read model does
// not hold the original create, the retry is refused, and not sent.
func TestRetryOfARunEndedLongAgoWithoutItsCreateIs409(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(e *env, first client.CommandResult){
		"no accepted event": func(*env, client.CommandResult) {},
		"its command is not the create": func(e *env, first client.CommandResult) {
			e.store.addEvent(api.EventRecord{RunID: first.RunID, Seq: 1, Type: string(events.RunAccepted),
				TenantID: tenantA, CommandID: "cmd_unknown"})
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			first := createdRun(t, e, "req-old", string(events.StatusFailed), 8*day, true)
			mutate(e, first)
			p := retry(t, e, "req-old").wantCode(t, http.StatusConflict, string(events.CodeIdempotencyKeyExpired)).problem(t)
			if !strings.Contains(p.Detail, first.RunID) || !strings.Contains(p.Detail, "new key") {
				t.Fatalf("detail %q", p.Detail)
			}
			if n := len(e.sender.envelopes()); n != 1 {
				t.Fatalf("%d commands sent, want only the first create", n)
			}
		})
	}
}

// TestRetryOfARecentOrLiveRunIsSent: a run that ended an hour ago, or one
// still running however old, is the executor's to answer.
func TestRetryOfARecentOrLiveRunIsSent(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		status string
		ago    time.Duration
	}{
		"ended an hour ago": {string(events.StatusCancelled), time.Hour},
		"running":           {string(events.StatusRunning), 8 * day},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			first := createdRun(t, e, "req-1", c.status, c.ago, false)
			got := retry(t, e, "req-1").want(t, http.StatusAccepted).command(t)
			sent := e.sender.envelopes()
			if len(sent) != 2 || sent[1].RunID != first.RunID {
				t.Fatalf("sent %d commands, want the retry too", len(sent))
			}
			if got.Outcome != client.OutcomeDuplicate || got.CommandID != first.CommandID ||
				got.DuplicateCommandID != sent[1].CommandID {
				t.Fatalf("answer %+v", got)
			}
		})
	}
}

// TestRetryWhoseRunCannotBeReadIsNotSent: without the run, the API cannot
// tell whether the executor still remembers it.
func TestRetryWhoseRunCannotBeReadIsNotSent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	createdRun(t, e, "req-1", string(events.StatusCompleted), 8*day, false)
	e.store.failRuns(errors.New("postgres: connection refused"))
	retry(t, e, "req-1").wantCode(t, http.StatusServiceUnavailable, string(events.CodeUnavailable))
	if n := len(e.sender.envelopes()); n != 1 {
		t.Fatalf("%d commands sent, want only the first create", n)
	}
}

// TestRememberFinishedIsTheGuardsWindow: a shorter window moves the guard
// (a run ended an hour ago is past half of 90 minutes), and one under a
// minute is refused like the executor's.
func TestRememberFinishedIsTheGuardsWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.RememberFinished = 90 * time.Minute }))
	createdRun(t, e, "req-1", string(events.StatusCompleted), time.Hour, false)
	if got := retry(t, e, "req-1").want(t, http.StatusAccepted).command(t); got.DuplicateCommandID != "" {
		t.Fatalf("answer %+v, want one from the read model", got)
	}
	if n := len(e.sender.envelopes()); n != 1 {
		t.Fatalf("%d commands sent, want only the first create", n)
	}
	cfg := api.Config{Tokens: map[string]string{tokenA: tenantA}, RememberFinished: 30 * time.Second}
	if _, err := api.New(cfg, newFakeStore(), &fakeSender{}, nil, zap.NewNop()); err == nil ||
		!strings.Contains(err.Error(), "RememberFinished") {
		t.Fatalf("New: %v", err)
	}
}

// TestRetryOfARunEndedLongAgoIsAnsweredFromPostgres: the Postgres read
// models hold what the duplicate answer needs (the accepted event's command
// and its outcome), as the projector writes them.
func TestRetryOfARunEndedLongAgoIsAnsweredFromPostgres(t *testing.T) {
	t.Parallel()
	e := newReadModelEnv(t)
	first := e.do(t, "POST", "/v1/runs?wait=0", tokenA, createBody("hi"), "Idempotency-Key", "req-old").
		want(t, http.StatusAccepted).command(t)
	create := e.sender.envelopes()[0]
	id := events.Identity{RunID: first.RunID, TenantID: tenantA, PlatformSessionID: create.PlatformSessionID}
	l := &rmLog{Log: eventstest.New(t, id, eventstest.Clock(time.Now().Add(-8*day).UnixMilli(), 10))}
	l.Accepted(create.CommandID, events.RunAcceptedPayload{AgentID: "coder", Input: events.UserInput{Content: "hi"},
		IdempotencyKey: "req-old", SandboxKey: events.SandboxKey{TenantID: tenantA, WorkspaceID: "default",
			AgentID: "coder", OwnerID: tenantA}}).Started("").Completed("done")
	e.project(t, l)

	got := retry(t, e.env, "req-old").want(t, http.StatusAccepted).command(t)
	if got.Outcome != client.OutcomeDuplicate || got.CommandID != create.CommandID ||
		got.OriginalOutcome != client.OutcomeAccepted || got.DuplicateCommandID != "" {
		t.Fatalf("answer %+v", got)
	}
	if n := len(e.sender.envelopes()); n != 1 {
		t.Fatalf("%d commands sent, want only the first create", n)
	}
}
