package events

import "errors"

// Why a call a grant covered asks again (ItemAwaitingApprovalPayload.AskReason).
const (
	GrantRevoked = "grant_revoked"
	GrantExpired = "grant_expired"
)

// PermissionGrantRevokedPayload is the payload of
// runtime.permission_grant.revoked: grant GrantID no longer covers calls of
// the run it is recorded on, and a later run of the session does not
// inherit it. The envelope carries the revoking commandId.
type PermissionGrantRevokedPayload struct {
	GrantID  string `json:"grantId"`
	ToolName string `json:"toolName"`
	RuleID   string `json:"ruleId"`
	Scope    string `json:"scope"`
	Reason   string `json:"reason,omitempty"`
	// Actor revoked the grant.
	Actor Actor `json:"actor"`
}

// ActiveAt reports whether the grant covers calls at time at (Unix ms): it
// has no expiry or has not reached it.
func (g PermissionGrant) ActiveAt(at int64) bool { return g.ExpiresAt == 0 || at < g.ExpiresAt }

// Grant returns the grant in force with id grantID (expired or not).
func (s RunState) Grant(grantID string) (PermissionGrant, bool) {
	for _, g := range s.Grants {
		if g.GrantID == grantID {
			return g, true
		}
	}
	return PermissionGrant{}, false
}

// Lapsed returns the grant that covered a call of tool that rule ruleID
// sends for approval and no longer does at time at, and why: GrantRevoked
// or GrantExpired. ok is false when no grant ever covered such a call.
func (s RunState) Lapsed(tool, ruleID string, at int64) (g PermissionGrant, reason string, ok bool) {
	for _, g := range s.Grants {
		if g.Covers(tool, ruleID) && !g.ActiveAt(at) {
			return g, GrantExpired, true
		}
	}
	for _, g := range s.RevokedGrants {
		if g.Covers(tool, ruleID) {
			return g, GrantRevoked, true
		}
	}
	return PermissionGrant{}, "", false
}

func applyRevoked(n *RunState, e Envelope, v *PermissionGrantRevokedPayload) error {
	if v.GrantID == "" {
		return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("grantId is required")}
	}
	for i, g := range n.Grants {
		if g.GrantID == v.GrantID {
			n.Grants = append(n.Grants[:i:i], n.Grants[i+1:]...)
			n.RevokedGrants = append(n.RevokedGrants, g)
			return nil
		}
	}
	// Admission records a revocation only where the grant is in force; one
	// of a grant the run does not hold changes nothing.
	return nil
}
