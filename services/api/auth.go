package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
)

// tokenEntry holds a token's SHA-256, so every comparison has the same length
// and runs in constant time.
type tokenEntry struct {
	sum       [sha256.Size]byte
	principal Principal
}

// hashTokens parses every token's principal. Config.Validate has checked
// them; an error here is a wiring bug.
func hashTokens(tokens map[string]string) ([]tokenEntry, error) {
	out := make([]tokenEntry, 0, len(tokens))
	for tok, spec := range tokens {
		p, err := ParsePrincipal(spec)
		if err != nil {
			return nil, fmt.Errorf("api: token principal %q: %w", spec, err)
		}
		out = append(out, tokenEntry{sum: sha256.Sum256([]byte(tok)), principal: p})
	}
	return out, nil
}

// principalFor returns the principal of token. It compares against every
// entry without stopping early, so its timing does not depend on which one
// matches. A token that is not a static one is tried as a JWT when JWTs are
// configured.
func (a *API) principalFor(token string) (Principal, bool) {
	sum := sha256.Sum256([]byte(token))
	var (
		found Principal
		ok    bool
	)
	for _, e := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			found, ok = e.principal, true
		}
	}
	if ok || a.jwt == nil {
		return found, ok
	}
	p, err := a.jwt.principal(token)
	return p, err == nil
}

// authenticate is a huma middleware: operations with a security requirement
// need a known bearer token; the token's principal is put in the context.
// A principal that may not send commands is answered 403 forbidden_scope on
// every operation that is not a read.
func (a *API) authenticate(ctx huma.Context, next func(huma.Context)) {
	if len(ctx.Operation().Security) == 0 {
		next(ctx)
		return
	}
	token, ok := bearerToken(ctx.Header("Authorization"))
	var p Principal
	if ok {
		p, ok = a.principalFor(token)
	}
	if !ok {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="xbot"`)
		_ = huma.WriteErr(a.api, ctx, http.StatusUnauthorized, "a valid bearer token is required")
		return
	}
	noteTenant(ctx.Context(), p.Tenant)
	if !isRead(ctx.Operation().Method) && !p.canCommand() {
		_ = huma.WriteErr(a.api, ctx, http.StatusForbidden,
			"this token may read and stream but not send commands (scope full needed)")
		return
	}
	next(huma.WithValue(ctx, principalKey{}, p))
}

// isRead reports whether method only reads.
func isRead(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// forbidden is the 403 of a principal without the scope an action needs.
func forbidden(detail string) *Problem {
	return newProblem(http.StatusForbidden, events.CodeForbiddenScope, detail)
}

func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "Bearer") && token != ""
}
