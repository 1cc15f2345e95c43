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
	// Options are the per-run options of the run the message creates (they need AgentID).
	Options *events.RunOptions `json:"options,omitempty"`
}

// SessionCommandResult is the answer of a session command: Intent says what
// a message became (follow_up, steer, clarification, queued).
type SessionCommandResult struct {
	Intent    string `json:"intent,omitempty"`
	RunID     string `json:"runId"`
	CommandID string `json:"commandId"`
	Outcome   string `json:"outcome"`
	Code      string `json:"code,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// SendSessionMessage sends the user's message to the session (POST
// /v1/sessions/{platformSessionId}/messages); opts.IdempotencyKey is
// required by the server (it is the message's input id).
func (c *Client) SendSessionMessage(ctx context.Context, sessionID string, req SessionMessageRequest, opts CommandOptions) (SessionCommandResult, error) {
	path, hdr := opts.apply("/v1/sessions/" + url.PathEscape(sessionID) + "/messages")
	var res SessionCommandResult
	err := c.call(ctx, http.MethodPost, path, req, &res, hdr...)
	return res, err
}
