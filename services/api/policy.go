package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/services/engine/policy"
)

// policyRule is one built-in policy rule as the API shows it.
type policyRule struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Argument string `json:"argument,omitempty"`
	Pattern  string `json:"pattern,omitempty" doc:"RE2 expression matched against the argument (or the whole arguments JSON)."`
	Unless   string `json:"unless,omitempty" doc:"RE2 expression that, when it matches too, makes the rule not apply."`
	Action   string `json:"action" enum:"allow,require_approval,deny"`
	Reason   string `json:"reason,omitempty"`
}

// builtinPolicy is the built-in policy rules and the hash that names them.
type builtinPolicy struct {
	Hash  string       `json:"hash" doc:"Names this set of rules; a run's capability snapshot records it as profile.policy.builtins."`
	Rules []policyRule `json:"rules" nullable:"false" doc:"Checked in this order, after the agent profile's own rules."`
}

type builtinPolicyOutput struct {
	Body builtinPolicy
}

// registerBuiltinPolicy adds GET /v1/system/policy/builtins: the built-in
// policy rules a capability snapshot names by hash instead of copying them.
func (a *API) registerBuiltinPolicy() {
	register(a, huma.Operation{
		OperationID: "getBuiltinPolicy", Method: http.MethodGet, Path: "/v1/system/policy/builtins",
		Summary: "Built-in policy rules",
		Description: "The built-in tool-call policy rules of this build and the hash that names them. A run's capability " +
			"snapshot (runtime.capability.snapshot_frozen) records the hash rather than the rules; this is how an auditor " +
			"reads what the hash stands for. Holds no tenant data.",
		Tags: []string{"System"},
	}, func(context.Context, *struct{}) (*builtinPolicyOutput, error) {
		out := &builtinPolicyOutput{}
		out.Body.Hash = policy.BuiltinsHash()
		for _, r := range policy.DefaultRules() {
			out.Body.Rules = append(out.Body.Rules, policyRule{ID: r.ID, Tool: r.Tool, Argument: r.Argument,
				Pattern: r.Pattern, Unless: r.Unless, Action: string(r.Action), Reason: r.Reason})
		}
		return out, nil
	})
}
