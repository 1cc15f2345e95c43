package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

type sessionMessageBody struct {
	Content        string          `json:"content" minLength:"1" maxLength:"262144" doc:"The user's message (at most 256 KiB of UTF-8)."`
	AgentID        string          `json:"agentId,omitempty" maxLength:"64" pattern:"^[A-Za-z0-9._-]{1,64}$" doc:"The agent of the session's first run: required when the session has no run yet, not used otherwise (the session's runs keep their agent)."`
	SandboxOwnerID string          `json:"sandboxOwnerId,omitempty" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The sandbox owner of the session's runs (sandboxKey.ownerId of its first run; later runs keep it): the user of a private chat, the group of a group chat. Default: the token's actor. Another owner needs scope act_as (403 forbidden_scope otherwise), and agentId."`
	Options        *runOptionsBody `json:"options,omitempty" doc:"Per-run options of the run the message creates (the session's first, or its next when the message becomes a follow_up); they need agentId. A message that becomes a steer, clarification or queued leaves the current run's options as they are."`
}

// SessionParams are CommandParams with the idempotency key required (it is
// the message's input id, which makes a retry safe) and the session's id.
// It is exported only because huma reads parameters from exported embedded
// structs.
type SessionParams struct {
	PlatformSessionID string `path:"platformSessionId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The platform session's id."`
	IdempotencyKey    string `header:"Idempotency-Key" required:"true" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The input id: a retry under the same key is answered duplicate with the first attempt's outcome, wherever it landed, and changes nothing."`
	ActorID           string `header:"X-Actor-Id" maxLength:"160" doc:"Not accepted: the actor of a command is the token's principal. Absent, or equal to the principal's actor; anything else is answered 403 forbidden_scope."`
	Wait              string `query:"wait" example:"2s" doc:"How long to wait for the outcome, as a Go duration (e.g. 2s, 500ms); 0 = do not wait. Default and cap are server settings. When the wait runs out the answer is 'pending'."`
}

type sessionMessageInput struct {
	SessionParams
	Body sessionMessageBody
}

// sessionCommandResult is the answer of a session command.
type sessionCommandResult struct {
	Intent    string `json:"intent,omitempty" enum:"follow_up,steer,clarification,queued" doc:"What the message became: follow_up (a new run of the session, also its first), steer (of the running run), clarification (the answer to the paused run's question), queued (kept pending while the run waits for an approval; applied as a steer once it resumes). Absent while pending, on a rejection and for an interrupt."`
	RunID     string `json:"runId" doc:"The run the message went to: the run it created (follow_up) or the run it steers or answers; while the outcome is pending, the run the message names, from which the executor goes on to the session's current run."`
	CommandID string `json:"commandId" doc:"The command's id; for a duplicate, the original command's id."`
	Outcome   string `json:"outcome" enum:"pending,accepted,rejected,duplicate,no_effect,applied" doc:"The first outcome recorded for the command. pending: durably queued, outcome not known yet — poll GET /v1/commands/{commandId}."`
	Code      string `json:"code,omitempty" doc:"Stable error code of a rejection."`
	Detail    string `json:"detail,omitempty" doc:"Human-readable explanation of the outcome."`
}

type sessionCommandOutput struct {
	Body sessionCommandResult
}

// sessionCommandErrors are the statuses the session commands answer
// themselves: another owner (403), no such session or run (404), a
// dependency unavailable (503).
var sessionCommandErrors = []int{http.StatusForbidden, http.StatusNotFound, http.StatusServiceUnavailable}

func (a *API) registerSessionMessage() {
	register(a, huma.Operation{
		OperationID: "sendSessionMessage", Method: http.MethodPost, Path: "/v1/sessions/{platformSessionId}/messages",
		Summary: "Send a message to a session",
		Description: "Queues the message as an AppendUserInput with intent auto; the executor that owns the session's " +
			"runs decides what it becomes by the state of the session's latest run (docs/sessions.md): the session's " +
			"first run or its next one (follow_up), a steer of a running run, the answer to a paused run's question " +
			"(clarification), or queued behind a pending approval and applied as a steer when the run resumes. " +
			"It is never rejected invalid_state. The session's first message makes its actor the session's owner, as a create does.",
		Tags: []string{"Sessions"}, DefaultStatus: http.StatusAccepted, Errors: sessionCommandErrors,
	}, a.sendSessionMessage)
}

func (a *API) sendSessionMessage(ctx context.Context, in *sessionMessageInput) (*sessionCommandOutput, error) {
	wait, err := a.waitFor(in.Wait)
	if err != nil {
		return nil, err
	}
	d, err := newDraft(commands.AppendUserInput, in.IdempotencyKey, "")
	if err != nil {
		return nil, err
	}
	p, err := a.sessionMessagePayload(ctx, in.Body)
	if err != nil {
		return nil, err
	}
	var longEnded bool
	if d.runID, longEnded, err = a.sessionTarget(ctx, in.PlatformSessionID, p); err != nil {
		return nil, err
	}
	// The first message of a session makes its actor the owner, as a create
	// does; a request refused above claims nothing.
	if _, err := a.joinSession(ctx, in.PlatformSessionID); err != nil {
		return nil, err
	}
	d.sessionID, d.payload = in.PlatformSessionID, p
	if longEnded {
		return a.resumeSession(ctx, d, in.ActorID, wait)
	}
	return a.submitSessionCommand(ctx, d, in.ActorID, wait)
}

// submitSessionCommand sends session command d: its envelope, to the run its
// idempotency key named first (claimSessionKey), answered when its outcome
// is known or wait runs out.
func (a *API) submitSessionCommand(ctx context.Context, d draft, actorHeader string, wait time.Duration) (*sessionCommandOutput, error) {
	env, err := d.envelope(ctx, actorHeader)
	if err != nil {
		return nil, err
	}
	if env.RunID, err = a.claimSessionKey(ctx, env); err != nil {
		return nil, err
	}
	return a.sendSessionCommand(ctx, env, a.flights.startRouted(env), wait, nil)
}

// sessionMessagePayload is the message's payload; agentId and options go
// with it for the case that it creates the session's first run.
func (a *API) sessionMessagePayload(ctx context.Context, b sessionMessageBody) (commands.AppendUserInputPayload, error) {
	p := commands.AppendUserInputPayload{Intent: commands.IntentAuto, Content: b.Content}
	if b.AgentID == "" {
		if b.Options != nil {
			return p, invalid("body.options", "needs agentId: options apply to the run a message creates, checked against agentId's profile", nil)
		}
		if b.SandboxOwnerID != "" {
			return p, invalid("body.sandboxOwnerId", "needs agentId: the owner goes with the session's first run", nil)
		}
		return p, nil
	}
	pr := principalOf(ctx)
	owner := pr.Actor
	if b.SandboxOwnerID != "" && b.SandboxOwnerID != pr.Actor {
		if !pr.canActAs() {
			return p, forbidden("sandboxOwnerId names another owner; acting for another owner needs scope act_as")
		}
		owner = b.SandboxOwnerID
	}
	p.AgentID = b.AgentID
	p.SandboxKey = &events.SandboxKey{TenantID: pr.Tenant, WorkspaceID: "default", AgentID: b.AgentID, OwnerID: owner}
	var err error
	p.Options, err = a.runOptions(ctx, b.AgentID, b.Options)
	return p, err
}

// sessionTarget is the run the message names: the session's latest run, or
// for a session without one the run its first message creates, derived from
// the session so that two first messages name the same run. The executor
// goes on from it to the session's head. longEnded says the latest run ended
// longer ago than the executor is sure to remember it (resumeSession).
func (a *API) sessionTarget(ctx context.Context, sessionID string, p commands.AppendUserInputPayload) (run string, longEnded bool, err error) {
	run, ok, longEnded, err := a.latestSessionRun(ctx, sessionID)
	switch {
	case err != nil:
		return "", false, err
	case ok:
		return run, longEnded, nil
	case p.SandboxKey == nil:
		return "", false, invalid("body.agentId", "is required: the session has no run yet", nil)
	}
	return commands.FirstSessionRunID(tenantOf(ctx), sessionID, *p.SandboxKey, a.partitions(ctx)), false, nil
}

// latestSessionRun is the session's latest run in the read model, or the
// one this instance sent a command for last (the read model may not show it
// yet); ok is false when neither knows one. longEnded: the read model's
// latest run ended, and nothing happened in the session since, longer ago
// than half of Config.RememberFinished.
func (a *API) latestSessionRun(ctx context.Context, sessionID string) (run string, ok, longEnded bool, err error) {
	tenant := tenantOf(ctx)
	s, err := a.store.GetSession(ctx, tenant, sessionID)
	switch {
	case err == nil && s.TenantID == tenant && s.LastRunID != "":
		longEnded = events.Status(s.LastRunStatus).Terminal() && time.Since(s.LastActivityAt) > a.cfg.RememberFinished/2
		if _, sent := a.flights.sessionRun(tenant, sessionID); sent {
			longEnded = false // this instance sent a command in the session since
		}
		return s.LastRunID, true, longEnded, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		a.log.Warn("reading a platform session failed", zap.String("tenant_id", tenant), zap.Error(err))
		return "", false, false, newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
			"the session cannot be read right now; retry with the same Idempotency-Key")
	}
	run, ok = a.flights.sessionRun(tenant, sessionID)
	return run, ok, false, nil
}

// claimSessionKey records, tenant-wide, which request and run the message's
// key stands for, and returns the run: a retry names the run its first
// attempt named, even if the session has moved on since, so that the
// executor's walk from there finds the first attempt.
func (a *API) claimSessionKey(ctx context.Context, env commands.Envelope) (string, error) {
	fp := commands.Fingerprint(env)
	standing, run, err := a.store.ClaimIdempotencyKey(ctx, env.TenantID, env.IdempotencyKey, fp, env.RunID)
	if err != nil {
		a.log.Warn("claiming an idempotency key failed", zap.String("tenant_id", env.TenantID), zap.Error(err))
		return "", newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
			"the idempotency key cannot be checked right now; retry with the same Idempotency-Key")
	}
	if !commands.SameRequest(standing, env) {
		return "", newProblem(http.StatusUnprocessableEntity, events.CodeIdempotencyKeyReused,
			"the Idempotency-Key was already used for another request; nothing changed (send the new request with a new key)")
	}
	if run == "" {
		run = env.RunID
	}
	return run, nil
}

// sendSessionCommand sends a session command, remembered as f, and answers
// with what it became; the executor records its outcome on the session's
// head (f from startRouted), or on its own run for a create.
func (a *API) sendSessionCommand(ctx context.Context, env commands.Envelope, f *flight, wait time.Duration, hold SessionHold) (*sessionCommandOutput, error) {
	row, known, err := a.sendAndWait(ctx, env, f, wait, hold)
	if err != nil {
		return nil, err
	}
	out := &sessionCommandOutput{Body: sessionCommandResult{RunID: env.RunID, CommandID: env.CommandID, Outcome: outcomePending}}
	if !known {
		return out, nil
	}
	r := resultFor(env, row)
	if err := rejectionProblem(r); err != nil {
		return nil, err
	}
	out.Body = sessionCommandResult{RunID: row.RunID, CommandID: r.CommandID, Outcome: r.Outcome, Code: r.Code, Detail: r.Detail}
	if out.Body.RunID == "" {
		out.Body.RunID = env.RunID
	}
	if row.CreatedRunID != "" {
		out.Body.RunID = row.CreatedRunID
	}
	if env.Type != commands.CancelRun && r.Outcome != string(events.OutcomeRejected) {
		out.Body.Intent = a.intentOf(ctx, row, f.intentOf())
	}
	return out, nil
}

// intentOf is what a session message became: fromTail, from the log's
// outcome event, or, when the answer came from the read model (which does not keep it),
// from the run's event at the outcome's seq.
func (a *API) intentOf(ctx context.Context, row CommandRecord, fromTail string) string {
	switch {
	case fromTail != "":
		return fromTail
	case row.Type == string(commands.CreateRun):
		return commands.IntentFollowUp // the session's first run
	case row.Seq <= 0 || row.RunID == "":
		return ""
	}
	evs, err := a.store.ListEvents(ctx, row.TenantID, row.RunID, row.Seq-1, 1, a.cfg.MaxEventPageBytes)
	if err != nil || len(evs) == 0 || evs[0].CommandID != row.CommandID {
		return ""
	}
	var e struct {
		Type    events.Type                 `json:"type"`
		Payload events.CommandOutcomeFields `json:"payload"`
	}
	if json.Unmarshal(evs[0].Envelope, &e) != nil {
		return ""
	}
	if e.Type == events.RunAccepted {
		return commands.IntentFollowUp
	}
	if e.Payload.Intent != "" {
		return e.Payload.Intent
	}
	return e.Payload.OriginalIntent
}
