package client

import (
	"context"
	"net/http"
)

// PolicyRule is one built-in tool-call policy rule.
type PolicyRule struct {
	ID       string `json:"id"`
	Tool     string `json:"tool"`
	Argument string `json:"argument,omitempty"`
	// Pattern is an RE2 expression matched against the argument (or the
	// whole arguments JSON); Unless, when it matches too, makes the rule not
	// apply.
	Pattern string `json:"pattern,omitempty"`
	Unless  string `json:"unless,omitempty"`
	// Action is allow, require_approval or deny.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
}

// BuiltinRules is the answer of GET /v1/system/policy/builtins.
type BuiltinRules struct {
	// Hash names the rules; a capability snapshot records it.
	Hash string `json:"hash"`
	// Rules are checked in this order, after an agent profile's own rules.
	Rules []PolicyRule `json:"rules"`
}

// BuiltinPolicy reads the built-in policy rules of the API's build and the
// hash that names them (GET /v1/system/policy/builtins).
func (c *Client) BuiltinPolicy(ctx context.Context) (BuiltinRules, error) {
	var out BuiltinRules
	err := c.call(ctx, http.MethodGet, "/v1/system/policy/builtins", nil, &out)
	return out, err
}
