package policy

import "encoding/json"

// Action is what a policy decides for a call.
type Action string

// Actions.
const (
	Allow           Action = "allow"
	RequireApproval Action = "require_approval"
	Deny            Action = "deny"
)

// Valid reports whether a is one of the three actions.
func (a Action) Valid() bool {
	return a == Allow || a == RequireApproval || a == Deny
}

// Rule matches tool calls and decides them.
type Rule struct {
	// ID names the rule; it is stable, because grants name it. Required:
	// 1-64 characters of [a-z0-9._-], starting with a letter or digit.
	ID string `yaml:"id" json:"id"`
	// Tool is the tool name the rule applies to; "*" applies to every tool.
	// Required unless Server is set.
	Tool string `yaml:"tool" json:"tool,omitempty"`
	// Server names an MCP server of the agent: the rule applies to that
	// server's tools only (offered as <server>__<tool>): all of them when
	// Tool is empty or "*", else the one Tool names, by its name on the
	// server or as offered to the model.
	Server string `yaml:"server" json:"server,omitempty"`
	// Argument is the top-level argument whose string value Pattern is
	// matched against (a non-string value is matched as its JSON text); ""
	// matches against the whole arguments JSON. A rule naming an argument
	// never matches a call without that argument, nor a call whose arguments
	// are not a JSON object.
	Argument string `yaml:"argument" json:"argument,omitempty"`
	// Pattern is an RE2 regular expression, unanchored; "" matches every
	// call of Tool.
	Pattern string `yaml:"pattern" json:"pattern,omitempty"`
	// Unless is an RE2 regular expression: the rule does not match when it
	// matches the same value (RE2 has no negative lookahead).
	Unless string `yaml:"unless" json:"unless,omitempty"`
	// Action is what the rule decides. Required.
	Action Action `yaml:"action" json:"action"`
	// Reason is shown to the person asked, or to the model when denied.
	// Default: a sentence naming the rule.
	Reason string `yaml:"reason" json:"reason,omitempty"`
}

// Config is a profile's policy. The zero Config is the built-in rules with
// everything else allowed.
type Config struct {
	// Rules are checked in order, before the built-in rules; the first that
	// matches decides.
	Rules []Rule `yaml:"rules" json:"rules,omitempty"`
	// NoDefaults drops the built-in rules (DefaultRules).
	NoDefaults bool `yaml:"noDefaults" json:"noDefaults,omitempty"`
	// Default decides a call no rule matches. Default allow.
	Default Action `yaml:"default" json:"default,omitempty"`
	// Builtins names the built-in rule set by its hash (BuiltinsHash). A
	// capability snapshot records it instead of copying the rules; empty
	// means this build's set. Not set in profiles.
	Builtins string `yaml:"-" json:"builtins,omitempty"`
}

// Validate reports every problem Compile would report.
func (c Config) Validate() error {
	_, err := Compile(c)
	return err
}

// Decision is the policy's answer for one call.
type Decision struct {
	Action Action
	// RuleID is the rule that decided ("" when Default did).
	RuleID string
	// Reason says why, in a sentence for a person or the model.
	Reason string
}

// args is a call's arguments, decoded on first use by a rule that names an
// argument.
type args struct {
	raw json.RawMessage
	// dir is where a path tool's relative path resolves.
	dir     string
	decoded bool
	fields  []field // nil when raw is not a JSON object
}
