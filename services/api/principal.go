package api

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Scope is a permission of a principal.
type Scope string

// Scopes a principal may hold.
const (
	// ScopeFull reads, streams and sends commands as the principal's own
	// actor, for sandbox keys and sessions it owns.
	ScopeFull Scope = "full"
	// ScopeRead reads and streams; every command answers 403 forbidden_scope.
	ScopeRead Scope = "read"
	// ScopeDemo is the read-only scope of the demo seeds: like ScopeRead.
	ScopeDemo Scope = "demo"
	// ScopeActAs is ScopeFull plus acting for another owner of the tenant
	// (sandboxKey.ownerId of someone else) and joining a platform session
	// another actor owns. The command's actor stays the principal.
	ScopeActAs Scope = "act_as"
	// ScopeUnconfined adds, to ScopeFull or ScopeActAs, asking for the
	// per-run options that lift a run's confinement: safetyMode
	// danger-full-access and approvalMode bypass (where the agent's
	// profile allows them).
	ScopeUnconfined Scope = "unconfined"
)

// actorPattern is the rule commands.Envelope.Validate applies to actor ids.
var actorPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// Principal is who a credential speaks for: a tenant, the actor every
// command it sends is recorded under (and the default sandbox owner), and
// what it may do.
type Principal struct {
	Tenant string
	Actor  string
	Scopes []Scope
}

// has reports whether p holds s.
func (p Principal) has(s Scope) bool { return slices.Contains(p.Scopes, s) }

// canCommand reports whether p may send commands.
func (p Principal) canCommand() bool { return p.has(ScopeFull) || p.has(ScopeActAs) }

// canActAs reports whether p may act for another owner or join another
// actor's session.
func (p Principal) canActAs() bool { return p.has(ScopeActAs) }

// ParsePrincipal parses the principal a token maps to: "tenant" (actor =
// the tenant, scope full: the form api_tokens always had), "tenant/actor"
// (scope full) or "tenant/actor/scope+scope". Tenants are 1-64 characters of
// [A-Za-z0-9._-], actors 1-160 of [A-Za-z0-9._:-], scopes full, read, demo,
// act_as or unconfined.
func ParsePrincipal(s string) (Principal, error) {
	parts := strings.Split(s, "/")
	if len(parts) > 3 {
		return Principal{}, errors.New("want tenant, tenant/actor or tenant/actor/scope+scope")
	}
	p := Principal{Tenant: parts[0], Actor: parts[0], Scopes: []Scope{ScopeFull}}
	if len(parts) > 1 {
		p.Actor = parts[1]
	}
	if len(parts) > 2 {
		p.Scopes = nil
		for _, sc := range strings.Split(parts[2], "+") {
			p.Scopes = append(p.Scopes, Scope(sc))
		}
	}
	return p, p.validate()
}

func (p Principal) validate() error {
	var errs []error
	if !tenantPattern.MatchString(p.Tenant) {
		errs = append(errs, fmt.Errorf("tenant %q must be 1-64 characters of [A-Za-z0-9._-]", p.Tenant))
	}
	if !actorPattern.MatchString(p.Actor) {
		errs = append(errs, fmt.Errorf("actor %q must be 1-160 characters of [A-Za-z0-9._:-]", p.Actor))
	}
	if len(p.Scopes) == 0 {
		errs = append(errs, errors.New("no scope"))
	}
	for _, s := range p.Scopes {
		switch s {
		case ScopeFull, ScopeRead, ScopeDemo, ScopeActAs, ScopeUnconfined:
		default:
			errs = append(errs, fmt.Errorf("unknown scope %q (want full, read, demo, act_as or unconfined)", s))
		}
	}
	return errors.Join(errs...)
}

type principalKey struct{}

// principalOf returns the authenticated principal. Every secured handler
// has one.
func principalOf(ctx context.Context) Principal {
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}

// tenantOf returns the authenticated tenant.
func tenantOf(ctx context.Context) string { return principalOf(ctx).Tenant }
