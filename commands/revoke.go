package commands

import (
	"fmt"
	"slices"

	"github.com/xbot-runtime/xbot/events"
)

// MaxGrantTTLSeconds bounds SubmitApprovalDecisionPayload.TTLSeconds: 30
// days, the longest a person may let a session's calls run unasked without
// deciding again.
const MaxGrantTTLSeconds = 30 * 24 * 3600

// RevokePermissionGrantPayload revokes grant GrantID in the run the command
// names. The API sends one to every run of the grant's session, so that no
// run in flight keeps using it and no later run inherits it.
type RevokePermissionGrantPayload struct {
	GrantID string `json:"grantId"`
	Reason  string `json:"reason,omitempty"`
}

// decide admits a RevokePermissionGrant. A grant is data the run reads at
// each tool call, so the revocation applies at once, in every state: a
// running run's next check no longer finds the grant, and a finished run's
// follow-up does not inherit it. A run that does not hold the grant (never
// had it, or it is already revoked) is left as it is.
//
// A follow-up created from this run before the revoke inherited the grant,
// and the API, which lists the session's runs from the read model, may not
// know that run yet: the revoke goes on to each run this one created
// (forwardRevoke), in the same transaction. Those runs live on this
// partition and their creates were sent before this admission, so the
// revoke lands after them.
func (p *RevokePermissionGrantPayload) decide(st *events.RunState, c Envelope, _ AdmitOptions) Decision {
	g, ok := st.Grant(p.GrantID)
	if !ok {
		return noEffect(c, fmt.Sprintf("run %s holds no grant %s", st.RunID, p.GrantID))
	}
	return Decision{Outcome: events.OutcomeApplied, Events: []events.Draft{
		{Type: events.PermissionGrantRevoked, CommandID: c.CommandID, Payload: events.PermissionGrantRevokedPayload{
			GrantID: g.GrantID, ToolName: g.ToolName, RuleID: g.RuleID, Scope: g.Scope, Reason: p.Reason, Actor: c.Actor}},
		AppliedEvent(Pending(c), ""),
	}, Send: forwardRevoke(st, c)}
}

// beforeRun refuses revoke c, whose run does not exist yet, run_not_found
// naming its grant. A create is sent under the session's hold and a revoke
// lists the runs claimed by then, but the two reach the run's partition
// from different producers: a create whose send outlived its hold (its API
// hung, or died with the record on its way) can land after the revoke. The
// run then does not inherit the grant (CreateRunPayload's decide).
func (p *RevokePermissionGrantPayload) beforeRun(c Envelope) Decision {
	r := rejection(c, events.CodeRunNotFound, fmt.Sprintf(runMissing, c.RunID))
	r.GrantID = p.GrantID
	return refused(c, r)
}

// inheritable is grants without those a revoke named before the run
// existed (st.PreRevokedGrants); grants itself when there are none.
func inheritable(st *events.RunState, grants []events.PermissionGrant) []events.PermissionGrant {
	if len(st.PreRevokedGrants) == 0 {
		return grants
	}
	out := make([]events.PermissionGrant, 0, len(grants))
	for _, g := range grants {
		if !slices.Contains(st.PreRevokedGrants, g.GrantID) {
			out = append(out, g)
		}
	}
	return out
}

// forwardRevoke is revoke c sent on to each run that st's run created (its
// follow-ups), under c's idempotency key: a run the API reached with the
// same request answers duplicate.
func forwardRevoke(st *events.RunState, c Envelope) []Envelope {
	var children []string
	if st.NextRunID != "" {
		children = append(children, st.NextRunID)
	}
	for _, rec := range st.Commands {
		if rec.CreatedRunID != "" && !slices.Contains(children, rec.CreatedRunID) {
			children = append(children, rec.CreatedRunID)
		}
	}
	slices.Sort(children)
	out := make([]Envelope, 0, len(children))
	for _, id := range children {
		fwd := c
		fwd.RunID, fwd.CommandID = id, events.DerivedID("cmd", "revoke_next", c.CommandID, id)
		out = append(out, fwd)
	}
	return out
}

// grantExpiry is when the grant decision p gives at time now expires (Unix
// ms); 0 when it has no TTL.
func grantExpiry(p *SubmitApprovalDecisionPayload, now int64) int64 {
	if p.TTLSeconds <= 0 {
		return 0
	}
	return now + p.TTLSeconds*1000
}

// validateGrantTTL checks that a TTL comes with an allow of scope
// platform_session and is within bounds.
func validateGrantTTL(ck *checker, p *SubmitApprovalDecisionPayload) {
	switch {
	case p.TTLSeconds == 0:
	case p.TTLSeconds < 0 || p.TTLSeconds > MaxGrantTTLSeconds:
		ck.add("payload.ttlSeconds", "must be between 1 and %d", MaxGrantTTLSeconds)
	case p.Decision != events.DecisionAllow || p.Scope != events.ScopePlatformSession:
		ck.add("payload.ttlSeconds", "is allowed only on an allow with scope platform_session")
	}
}
