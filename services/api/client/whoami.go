package client

import (
	"context"
	"net/http"
	"slices"
)

// Principal is GET /v1/whoami: who the client's token speaks for.
type Principal struct {
	TenantID string   `json:"tenantId"`
	ActorID  string   `json:"actorId"`
	Scopes   []string `json:"scopes"`
}

// CanCommand reports whether the principal may send commands (scope full or act_as).
func (p Principal) CanCommand() bool {
	return slices.Contains(p.Scopes, "full") || slices.Contains(p.Scopes, "act_as")
}

// Whoami reads the principal of the client's token (GET /v1/whoami). A token the API does
// not know is a *Problem with status 401.
func (c *Client) Whoami(ctx context.Context) (Principal, error) {
	var out Principal
	err := c.call(ctx, http.MethodGet, "/v1/whoami", nil, &out)
	return out, err
}
