package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// tokenEntry holds a token's SHA-256, so every comparison has the same length
// and runs in constant time.
type tokenEntry struct {
	sum    [sha256.Size]byte
	tenant string
}

func hashTokens(tokens map[string]string) []tokenEntry {
	out := make([]tokenEntry, 0, len(tokens))
	for tok, tenant := range tokens {
		out = append(out, tokenEntry{sum: sha256.Sum256([]byte(tok)), tenant: tenant})
	}
	return out
}

// tenantFor returns the tenant of token. It compares against every entry
// without stopping early, so its timing does not depend on which one matches.
func (a *API) tenantFor(token string) (string, bool) {
	sum := sha256.Sum256([]byte(token))
	tenant := ""
	for _, e := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			tenant = e.tenant
		}
	}
	return tenant, tenant != ""
}

type tenantKey struct{}

// authenticate is a huma middleware: operations with a security requirement
// need a known bearer token; the token's tenant is put in the context.
func (a *API) authenticate(ctx huma.Context, next func(huma.Context)) {
	if len(ctx.Operation().Security) == 0 {
		next(ctx)
		return
	}
	token, ok := bearerToken(ctx.Header("Authorization"))
	tenant := ""
	if ok {
		tenant, ok = a.tenantFor(token)
	}
	if !ok {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="xbot"`)
		_ = huma.WriteErr(a.api, ctx, http.StatusUnauthorized, "a valid bearer token is required")
		return
	}
	noteTenant(ctx.Context(), tenant)
	next(huma.WithValue(ctx, tenantKey{}, tenant))
}

func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}

// tenantOf returns the authenticated tenant. Every secured handler has one.
func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}
