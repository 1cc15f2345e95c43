package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// whoami is the principal of the request's credential.
type whoami struct {
	TenantID string   `json:"tenantId" doc:"The tenant the credential belongs to."`
	ActorID  string   `json:"actorId" doc:"The actor every command the credential sends is recorded under (and its default sandbox owner)."`
	Scopes   []string `json:"scopes" nullable:"false" doc:"What the credential may do: full, read, demo, act_as, unconfined."`
}

type whoamiOutput struct {
	Body whoami
}

// registerWhoami adds GET /v1/whoami: the principal of the request's own
// credential, so a client that holds a token on someone's behalf (the IM
// gateway) learns what the token may do before it acts with it.
func (a *API) registerWhoami() {
	register(a, huma.Operation{
		OperationID: "getWhoami", Method: http.MethodGet, Path: "/v1/whoami",
		Summary: "The caller's principal",
		Description: "The tenant, actor and scopes the request's bearer token maps to. It reveals nothing the " +
			"token's holder does not already hold: no other principal, no token.",
		Tags: []string{"System"},
	}, func(ctx context.Context, _ *struct{}) (*whoamiOutput, error) {
		p := principalOf(ctx)
		out := &whoamiOutput{}
		out.Body.TenantID, out.Body.ActorID = p.Tenant, p.Actor
		out.Body.Scopes = make([]string, 0, len(p.Scopes))
		for _, s := range p.Scopes {
			out.Body.Scopes = append(out.Body.Scopes, string(s))
		}
		return out, nil
	})
}
