package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/xbot-runtime/xbot/events"
)

// SessionMessageRequest is the body of POST /v1/sessions/{platformSessionId}/messages.
type SessionMessageRequest struct {
	Content string `json:"content"`
	// AgentID is the agent of the session's first run; not used once the session has one.
	AgentID string `json:"agentId,omitempty"`
	// SandboxOwnerID is the sandbox owner of the session's runs; default the
	// token's actor, another needs scope act_as.
	SandboxOwnerID string `json:"sandboxOwnerId,omitempty"`
	// Options are the per-run options of the run the message creates (they need AgentID).
	Options *events.RunOptions `json:"options,omitempty"`
}

// Intents a session message becomes, as SessionCommandResult.Intent names them.
const (
	IntentFollowUp      = "follow_up"
	IntentSteer         = "steer"
	IntentClarification = "clarification"
	IntentQueued        = "queued"
)

// SessionCommandResult is the answer of a session command: Intent says what
// a message became (IntentFollowUp, IntentSteer, IntentClarification,
// IntentQueued; empty for an interrupt, and when the outcome was learnt by
// polling).
type SessionCommandResult struct {
	Intent    string `json:"intent,omitempty"`
	RunID     string `json:"runId"`
	CommandID string `json:"commandId"`
	Outcome   string `json:"outcome"`
	Code      string `json:"code,omitempty"`
	Detail    string `json:"detail,omitempty"`
	// IdempotencyKey is the key the command was sent under: for a message,
	// its input id. Set also when the call failed; not part of the answer's
	// JSON.
	IdempotencyKey string `json:"-"`
}

// SendSessionMessage sends the user's message to the session (POST
// /v1/sessions/{platformSessionId}/messages). opts.IdempotencyKey is the
// message's input id: give one to make the message retryable across calls
// (the client generates one otherwise). A pending outcome is polled for as
// for any command; a rejection is a *RejectedError.
func (c *Client) SendSessionMessage(ctx context.Context, sessionID string, req SessionMessageRequest, opts CommandOptions) (SessionCommandResult, error) {
	return c.sessionCommand(ctx, "/v1/sessions/"+url.PathEscape(sessionID)+"/messages", req, opts)
}

// InterruptRequest is the body of POST /v1/sessions/{platformSessionId}/interrupt.
type InterruptRequest struct {
	// CancelQueued drops the session's messages still queued on the
	// interrupted run (true) instead of making them the session's next run.
	CancelQueued bool `json:"cancelQueued"`
}

// InterruptSession stops the session's current reply and keeps the session
// (POST /v1/sessions/{platformSessionId}/interrupt): outcome no_effect when
// no reply is in progress; a session the tenant has no run in is a 404
// *Problem.
func (c *Client) InterruptSession(ctx context.Context, sessionID string, req InterruptRequest, opts CommandOptions) (SessionCommandResult, error) {
	return c.sessionCommand(ctx, "/v1/sessions/"+url.PathEscape(sessionID)+"/interrupt", req, opts)
}

// sessionCommand sends a session command as command sends a run's.
func (c *Client) sessionCommand(ctx context.Context, path string, body any, opts CommandOptions) (SessionCommandResult, error) {
	key := opts.key()
	var res SessionCommandResult
	err := c.call(ctx, http.MethodPost, opts.path(path), body, &res, "Idempotency-Key", key)
	res.IdempotencyKey = key // with an error too, as command does
	if err != nil {
		return res, err
	}
	cr := res.commandResult()
	if res.Outcome == OutcomePending && opts.polls() {
		var err error
		if cr, err = c.awaitOutcome(ctx, cr); err != nil {
			return res, err
		}
		res.RunID, res.Outcome, res.Code, res.Detail = cr.RunID, cr.Outcome, cr.Code, cr.Detail
		if cr.CreatedRunID != "" {
			res.RunID = cr.CreatedRunID
		}
	}
	return res, rejection(cr)
}

func (res SessionCommandResult) commandResult() CommandResult {
	return CommandResult{RunID: res.RunID, CommandID: res.CommandID, Outcome: res.Outcome, Code: res.Code,
		Detail: res.Detail, IdempotencyKey: res.IdempotencyKey}
}
