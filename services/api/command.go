package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// outcomePending answers a command whose outcome is not known within the wait.
const outcomePending = "pending"

// CommandParams are the header and query parameters every command endpoint
// takes. It is exported only because huma reads parameters from exported
// embedded structs.
type CommandParams struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"Makes retries safe: the same key for the same run is answered 'duplicate' with the original command's id and changes nothing. Generated when absent."`
	ActorID        string `header:"X-Actor-Id" maxLength:"160" doc:"Not accepted: the actor of a command is the token's principal. Absent, or equal to the principal's actor; anything else is answered 403 forbidden_scope."`
	Wait           string `query:"wait" example:"2s" doc:"How long to wait for the outcome, as a Go duration (e.g. 2s, 500ms); 0 = do not wait. Default and cap are server settings. When the wait runs out the answer is 'pending'."`
}

// commandResult is the answer of every command endpoint.
type commandResult struct {
	RunID              string `json:"runId" doc:"The run the command is for."`
	CommandID          string `json:"commandId" doc:"The command's id; for a duplicate, the original command's id."`
	Outcome            string `json:"outcome" enum:"pending,accepted,rejected,duplicate,no_effect,applied" doc:"The first outcome recorded for the command. pending: durably queued, outcome not known yet — poll GET /v1/commands/{commandId}."`
	Code               string `json:"code,omitempty" doc:"Stable error code of a rejection."`
	Detail             string `json:"detail,omitempty" doc:"Human-readable explanation of the outcome."`
	OriginalCommandID  string `json:"originalCommandId,omitempty" doc:"For a duplicate: the command that first used the idempotency key (same as commandId)."`
	DuplicateCommandID string `json:"duplicateCommandId,omitempty" doc:"For a duplicate: the id this request's command got. Absent when the API answered a create from the read models without sending it (its run ended longer ago than half of executor_remember_finished)."`
	OriginalOutcome    string `json:"originalOutcome,omitempty" doc:"For a duplicate: the original command's outcome, which stands."`
	OriginalCode       string `json:"originalCode,omitempty" doc:"For a duplicate: the original command's error code, if it was rejected."`
	CreatedRunID       string `json:"createdRunId,omitempty" doc:"For an applied follow-up (or a duplicate of one): the new run it started in the same platform session, as recorded by runtime.command.applied. A retry names the same run."`
}

type commandOutput struct {
	Body commandResult
}

// draft is a command before it becomes an envelope.
type draft struct {
	typ       commands.Type
	commandID string
	key       string
	runID     string
	sessionID string
	payload   any
}

// newDraft gives a command its id and idempotency key (header, else body
// field, else "auto-"+commandId).
func newDraft(t commands.Type, headerKey, bodyKey string) (draft, error) {
	d := draft{typ: t, commandID: events.NewID("cmd"), key: headerKey}
	switch {
	case headerKey != "" && bodyKey != "" && headerKey != bodyKey:
		return d, invalid("header.Idempotency-Key", "differs from body.idempotencyKey", headerKey)
	case headerKey != "" && !commands.ValidIdempotencyKey(headerKey):
		return d, invalid("header.Idempotency-Key", "must be 1-160 characters of [A-Za-z0-9._:-]", headerKey)
	case bodyKey != "" && !commands.ValidIdempotencyKey(bodyKey):
		return d, invalid("body.idempotencyKey", "must be 1-160 characters of [A-Za-z0-9._:-]", bodyKey)
	case headerKey == "" && bodyKey != "":
		d.key = bodyKey
	case headerKey == "":
		d.key = "auto-" + d.commandID
	}
	return d, nil
}

// envelope builds and validates the command envelope. Its actor is the
// principal's: the X-Actor-Id header can only repeat it.
func (d draft) envelope(ctx context.Context, actorHeader string) (commands.Envelope, error) {
	p := principalOf(ctx)
	if err := checkActorHeader(p, actorHeader); err != nil {
		return commands.Envelope{}, err
	}
	raw, err := json.Marshal(d.payload)
	if err != nil {
		return commands.Envelope{}, fmt.Errorf("encode %s payload: %w", d.typ, err)
	}
	env := commands.Envelope{CommandID: d.commandID, IdempotencyKey: d.key, RunID: d.runID,
		PlatformSessionID: d.sessionID, Type: d.typ, Actor: events.Actor{Type: "user", ID: p.Actor},
		TenantID: p.Tenant, IssuedAt: time.Now().UnixMilli(), SchemaVersion: events.SchemaVersion, Payload: raw}
	if _, err := env.Validate(); err != nil {
		return env, err
	}
	return env, nil
}

// checkActorHeader refuses an X-Actor-Id naming anyone but the principal:
// the actor recorded in events and the audit is who the credential is.
func checkActorHeader(p Principal, header string) error {
	if header == "" || header == p.Actor {
		return nil
	}
	return forbidden("X-Actor-Id is not accepted: the actor of a command is the token's principal")
}

// waitFor parses ?wait=.
func (a *API) waitFor(raw string) (time.Duration, error) {
	if raw == "" {
		return a.cfg.WaitDefault, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 0 {
		return 0, invalid("query.wait", "must be a non-negative duration such as 2s or 500ms (0 = do not wait)", raw)
	}
	return min(d, a.cfg.WaitMax), nil
}

// dispatch sends the command, then waits up to wait for its outcome.
func (a *API) dispatch(ctx context.Context, env commands.Envelope, wait time.Duration) (*commandOutput, error) {
	return a.dispatchHeld(ctx, env, wait, nil)
}

// dispatchHeld is dispatch of a create under a session's hold (nil: none),
// released once the create is sent.
func (a *API) dispatchHeld(ctx context.Context, env commands.Envelope, wait time.Duration, hold SessionHold) (*commandOutput, error) {
	row, known, err := a.sendAndWait(ctx, env, a.flights.start(env), wait, hold)
	if err != nil {
		return nil, err
	}
	out := &commandOutput{Body: commandResult{RunID: env.RunID, CommandID: env.CommandID, Outcome: outcomePending}}
	if known {
		out.Body = resultFor(env, row)
		if err := rejectionProblem(out.Body); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sendAndWait sends the command, remembered as f before the send (so that
// its outcome cannot reach the tail first), releases hold (nil: none) once
// the send is done, then waits up to wait for its outcome; known is false
// when the wait ran out first.
func (a *API) sendAndWait(ctx context.Context, env commands.Envelope, f *flight, wait time.Duration, hold SessionHold) (row CommandRecord, known bool, err error) {
	noteRun(ctx, env.RunID)
	err = a.send(ctx, env)
	// A failed send may still have written the command (a produce that
	// timed out): its run's claim is kept either way.
	a.release(ctx, hold, true)
	leaveIntake(ctx) // the wait for the outcome holds no intake slot
	if err != nil {
		a.flights.forget(f)
		return row, false, fmt.Errorf("send %s %s to run %s: %w: %w", env.Type, env.CommandID, env.RunID, errUnavailable, err)
	}
	if wait <= 0 {
		return row, false, nil
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	row, err = a.awaitOutcome(wctx, env, f)
	switch {
	case err == nil:
		return row, true, nil
	case ctx.Err() != nil:
		return row, false, ctx.Err() // the client went away
	case !errors.Is(err, context.DeadlineExceeded):
		// The command is queued; a read-model failure must not make the client
		// think it was not. It polls instead.
		a.log.Warn("wait for command outcome", zap.String("command_id", env.CommandID),
			zap.String("run_id", env.RunID), zap.String("tenant_id", env.TenantID), zap.Error(err))
	}
	return row, false, nil
}

// send sends env and returns once it is sent or ctx ends, whichever comes
// first. A produce that does not heed its context (Kafka's idempotent
// producer waits for the outcome of a record already in flight to a broker
// that stopped answering) goes on without the request: its command may
// still be queued, as a failed send's may (sendAndWait keeps the run's
// claim either way).
func (a *API) send(ctx context.Context, env commands.Envelope) error {
	sent := make(chan error, 1)
	go func() { sent <- a.sender.Send(ctx, env) }()
	select {
	case err := <-sent:
		return err
	case <-ctx.Done():
		select {
		case err := <-sent: // it returned meanwhile: its answer is the one
			return err
		default:
			return context.Cause(ctx)
		}
	}
}

// readModelGrace is how long a command waits for its outcome on the tail of
// the events topic before it also asks the read model: the tail shows an
// outcome within milliseconds of its commit, so the read model is asked only
// for what the log never shows (a dead-lettered command) or rarely does in
// time (a tail that is behind).
const readModelGrace = 250 * time.Millisecond

// awaitOutcome waits for the first outcome of env: from the tail of the
// events topic when this instance follows it, from the read model
// otherwise, after readModelGrace, or when the tail's answer is not the
// whole one.
func (a *API) awaitOutcome(ctx context.Context, env commands.Envelope, f *flight) (CommandRecord, error) {
	if !a.following() {
		return a.store.WaitCommand(ctx, env.TenantID, env.CommandID)
	}
	grace := time.NewTimer(readModelGrace)
	defer grace.Stop()
	select {
	case <-f.done:
		if rec, _ := f.result(); complete(rec) {
			return rec, nil
		}
		return a.store.WaitCommand(ctx, env.TenantID, env.CommandID)
	case <-grace.C:
	case <-ctx.Done():
		return CommandRecord{}, ctx.Err()
	}
	type answer struct {
		rec CommandRecord
		err error
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fromStore := make(chan answer, 1)
	go func() {
		rec, err := a.store.WaitCommand(rctx, env.TenantID, env.CommandID)
		fromStore <- answer{rec, err}
	}()
	select {
	case <-f.done:
		if rec, _ := f.result(); complete(rec) {
			return rec, nil
		}
	case ans := <-fromStore:
		return ans.rec, ans.err
	}
	ans := <-fromStore
	return ans.rec, ans.err
}

func resultFor(env commands.Envelope, row CommandRecord) commandResult {
	r := commandResult{RunID: env.RunID, CommandID: env.CommandID, Outcome: row.FirstOutcome,
		Code: row.Code, Detail: row.Message}
	if r.Outcome == "" {
		r.Outcome = row.Outcome
	}
	if r.Outcome == string(events.OutcomeDuplicate) && row.OriginalCommandID != "" {
		r.CommandID, r.OriginalCommandID, r.DuplicateCommandID = row.OriginalCommandID, row.OriginalCommandID, env.CommandID
		r.OriginalOutcome, r.OriginalCode = row.OriginalOutcome, row.OriginalCode
	}
	// The read model has it from the applied outcome (for a duplicate, from
	// the original command's).
	r.CreatedRunID = row.CreatedRunID
	return r
}
