package imgateway

import (
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// bearer returns the request's token: the Authorization bearer, else ?token=.
func bearer(r *http.Request) string {
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return r.URL.Query().Get("token")
}

// authenticate asks the API who r's token is (GET /v1/whoami), so the
// API's own token table decides and the gateway keeps none. It answers the
// principal and a client speaking with the token, or the HTTP status to
// refuse with: 401 without a token or with one the API does not know, 403
// for a read-only token on any endpoint but /sandbox, 503 when the API
// cannot answer. The token is never logged.
func (g *Gateway) authenticate(r *http.Request, ep *endpoint) (client.Principal, *client.Client, int) {
	tok := bearer(r)
	if tok == "" {
		return client.Principal{}, nil, http.StatusUnauthorized
	}
	api := g.cfg.API.WithToken(tok)
	who, err := api.Whoami(r.Context())
	var p *client.Problem
	switch {
	case errors.As(err, &p) && p.Status == http.StatusUnauthorized:
		return who, nil, http.StatusUnauthorized
	case err != nil:
		g.log.Warn("whoami failed", zap.String("endpoint", ep.Name), zap.Error(err))
		return who, nil, http.StatusServiceUnavailable
	case !who.CanCommand() && !ep.first():
		return who, nil, http.StatusForbidden
	}
	return who, api, 0
}

// headerHas reports whether the comma-separated header value v lists token.
func headerHas(v, token string) bool {
	for _, part := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(part), token) {
			return true
		}
	}
	return false
}
