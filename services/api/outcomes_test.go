package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
	"github.com/xbot-runtime/xbot/services/api/client"
)

func TestACommandInFlightIsPending(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.sender.executor = false // sent, never admitted
	res := e.do(t, http.MethodPost, "/v1/runs?wait=0", tokenA, createBody("hi")).want(t, http.StatusAccepted).command(t)
	cmd := decode[client.Command](t, e.do(t, http.MethodGet, "/v1/commands/"+res.CommandID, tokenA, nil).want(t, http.StatusOK))
	if cmd.Outcome != "pending" || cmd.FirstOutcome != "pending" || cmd.RunID != res.RunID || cmd.Type != "CreateRun" || cmd.TenantID != tenantA {
		t.Fatalf("command in flight: %+v", cmd)
	}
	e.do(t, http.MethodGet, "/v1/commands/"+res.CommandID, tokenB, nil).wantCode(t, http.StatusNotFound, "command_not_found")
	e.do(t, http.MethodGet, "/v1/commands/cmd_never_sent", tokenA, nil).wantCode(t, http.StatusNotFound, "command_not_found")
}

// logged is the record of an event of c's run as the events topic's tail
// delivers it.
func logged(t *testing.T, c commands.Envelope, seq int64, typ events.Type, payload any) *uistream.Record {
	t.Helper()
	raw, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	e := events.Envelope{EventID: events.NewID("evt"), RunID: c.RunID, Seq: seq, SchemaVersion: events.SchemaVersion,
		Type: typ, OccurredAt: time.Now().UnixMilli(), TenantID: c.TenantID, CommandID: c.CommandID, Payload: raw}
	value, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return &uistream.Record{Key: c.RunID, Value: value}
}

// TestOutcomesAreAnsweredFromTheLog: the read model never records the
// outcome; the API answers from the events its tail delivers, and only an
// event of the command's own tenant and run counts.
func TestOutcomesAreAnsweredFromTheLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.sender.executor = false
	ready := make(chan struct{})
	close(ready)
	e.api.FollowOutcomes(ready)
	e.sender.onSend = func(c commands.Envelope) {
		foreign := c
		foreign.TenantID = tenantB
		recs := []*uistream.Record{logged(t, foreign, 1, events.CommandRejected, events.CommandRejectedPayload{Code: "x"})}
		if c.Type == commands.CreateRun {
			recs = append(recs, logged(t, c, 1, events.RunAccepted, events.RunAcceptedPayload{IdempotencyKey: c.IdempotencyKey}))
		} else {
			recs = append(recs, logged(t, c, 7, events.CommandNoEffect, events.CommandNoEffectPayload{
				CommandType: string(c.Type), IdempotencyKey: c.IdempotencyKey, Reason: "the run has ended"}))
		}
		go e.api.Observe(recs)
	}
	res := e.do(t, http.MethodPost, "/v1/runs", tokenA, createBody("hi")).want(t, http.StatusAccepted).command(t)
	if res.Outcome != "accepted" {
		t.Fatalf("create answered from the log: %+v", res)
	}
	run := seedRun(e, tenantA, "completed")
	res = e.do(t, http.MethodPost, "/v1/runs/"+run.RunID+"/cancel", tokenA, nil).want(t, http.StatusAccepted).command(t)
	if res.Outcome != "no_effect" || res.Detail != "the run has ended" {
		t.Fatalf("cancel answered from the log: %+v", res)
	}
	cmd := decode[client.Command](t, e.do(t, http.MethodGet, "/v1/commands/"+res.CommandID, tokenA, nil).want(t, http.StatusOK))
	if cmd.FirstOutcome != "no_effect" || cmd.Message != "the run has ended" || cmd.Seq != 7 {
		t.Fatalf("GET of a command the read model does not hold yet: %+v", cmd)
	}
}

// TestACommandAnotherInstanceSentIsPendingThenAnsweredFromTheLog: the
// commands topic's tail shows a command another instance sent. It is
// pending for its tenant (404 for another, and a record that is not a
// command changes nothing), then answered with the outcome the events
// topic's tail shows, before the read model has it.
func TestACommandAnotherInstanceSentIsPendingThenAnsweredFromTheLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ready := make(chan struct{})
	close(ready)
	e.api.FollowOutcomes(ready)
	c, err := commands.New(commands.CreateRun, commands.Header{RunID: events.NewID("run"), TenantID: tenantA,
		Actor: events.Actor{Type: "user", ID: tenantA}}, commands.CreateRunPayload{AgentID: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	e.do(t, http.MethodGet, "/v1/commands/"+c.CommandID, tokenA, nil).wantCode(t, http.StatusNotFound, "command_not_found")
	e.api.ObserveCommands([][]byte{[]byte("not a command"), raw})
	cmd := decode[client.Command](t, e.do(t, http.MethodGet, "/v1/commands/"+c.CommandID, tokenA, nil).want(t, http.StatusOK))
	if cmd.Outcome != "pending" || cmd.RunID != c.RunID || cmd.Type != "CreateRun" || cmd.IdempotencyKey != c.IdempotencyKey {
		t.Fatalf("a command another instance sent, in flight: %+v", cmd)
	}
	e.do(t, http.MethodGet, "/v1/commands/"+c.CommandID, tokenB, nil).wantCode(t, http.StatusNotFound, "command_not_found")
	e.api.Observe([]*uistream.Record{logged(t, c, 1, events.RunAccepted, events.RunAcceptedPayload{IdempotencyKey: c.IdempotencyKey})})
	cmd = decode[client.Command](t, e.do(t, http.MethodGet, "/v1/commands/"+c.CommandID, tokenA, nil).want(t, http.StatusOK))
	if cmd.Outcome != "accepted" || cmd.Seq != 1 {
		t.Fatalf("a command another instance sent, once the log shows its outcome: %+v", cmd)
	}
}
