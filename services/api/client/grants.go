package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/xbot-runtime/xbot/events"
)

// SessionGrant is a platform_session grant in force.
type SessionGrant struct {
	GrantID   string       `json:"grantId"`
	ToolName  string       `json:"toolName"`
	RuleID    string       `json:"ruleId"`
	Scope     string       `json:"scope"`
	RunID     string       `json:"runId"`
	ItemID    string       `json:"itemId,omitempty"`
	GrantedBy events.Actor `json:"grantedBy"`
	// GrantedAt and ExpiresAt are Unix milliseconds; ExpiresAt is 0 for a
	// grant without a TTL.
	GrantedAt int64 `json:"grantedAt"`
	ExpiresAt int64 `json:"expiresAt,omitempty"`
}

// RevokeResult is the answer of a revoke: one command per run of the session.
type RevokeResult struct {
	GrantID  string          `json:"grantId"`
	Commands []CommandResult `json:"commands"`
	// IdempotencyKey is the key the revoke was sent under, set also when
	// the call failed; not part of the answer's JSON.
	IdempotencyKey string `json:"-"`
}

// SessionGrants reads the grants in force of a platform session (GET
// /v1/sessions/{platformSessionId}/grants).
func (c *Client) SessionGrants(ctx context.Context, sessionID string) ([]SessionGrant, error) {
	var out struct {
		Grants []SessionGrant `json:"grants"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/sessions/"+url.PathEscape(sessionID)+"/grants", nil, &out)
	return out.Grants, err
}

// RevokeGrant revokes a session grant in every run of the session (DELETE
// /v1/sessions/{platformSessionId}/grants/{grantId}).
func (c *Client) RevokeGrant(ctx context.Context, sessionID, grantID, reason string, opts CommandOptions) (RevokeResult, error) {
	path := opts.path("/v1/sessions/" + url.PathEscape(sessionID) + "/grants/" + url.PathEscape(grantID))
	var body any
	if reason != "" {
		body = map[string]string{"reason": reason}
	}
	key := opts.key()
	var out RevokeResult
	err := c.call(ctx, http.MethodDelete, path, body, &out, "Idempotency-Key", key)
	out.IdempotencyKey = key
	for i := range out.Commands {
		out.Commands[i].IdempotencyKey = key
	}
	return out, err
}

// RunSnapshot is a run's frozen capability snapshot.
type RunSnapshot struct {
	RunID    string          `json:"runId"`
	Seq      int64           `json:"seq"`
	Hash     string          `json:"hash"`
	FrozenAt int64           `json:"frozenAt"`
	Snapshot json.RawMessage `json:"snapshot"`
}

// GetRunSnapshot reads a run's capability snapshot (GET
// /v1/runs/{runId}/snapshot); a *Problem with status 404 until it is frozen.
func (c *Client) GetRunSnapshot(ctx context.Context, runID string) (RunSnapshot, error) {
	var out RunSnapshot
	err := c.call(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(runID)+"/snapshot", nil, &out)
	return out, err
}
