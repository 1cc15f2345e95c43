package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/policy"
)

// TestRulesNamingAnMCPServer checks rules that name a server (every tool of
// it) or one of its tools, by its own name or as offered to the model.
func TestRulesNamingAnMCPServer(t *testing.T) {
	t.Parallel()
	p, err := policy.Compile(policy.Config{NoDefaults: true, Rules: []policy.Rule{
		{ID: "no-delete", Server: "github", Tool: "delete_repo", Action: policy.Deny},
		{ID: "issues-by-offered-name", Server: "github", Tool: "github__create_issue", Pattern: "urgent", Action: policy.Deny},
		{ID: "github-asks", Server: "github", Action: policy.RequireApproval},
		{ID: "search-all", Server: "search", Tool: "*", Action: policy.Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, args string
		want       policy.Action
		rule       string
	}{
		{"github__delete_repo", `{}`, policy.Deny, "no-delete"},
		{"github__create_issue", `{"title":"urgent fix"}`, policy.Deny, "issues-by-offered-name"},
		{"github__create_issue", `{"title":"later"}`, policy.RequireApproval, "github-asks"},
		{"search__query", `{}`, policy.Allow, "search-all"},
		{"githubx__delete_repo", `{}`, policy.Allow, ""}, // another server whose name starts alike
		{"delete_repo", `{}`, policy.Allow, ""},          // not an MCP tool
	} {
		d := p.Evaluate(tc.tool, json.RawMessage(tc.args))
		if d.Action != tc.want || d.RuleID != tc.rule {
			t.Errorf("%s %s: %s by %q, want %s by %q", tc.tool, tc.args, d.Action, d.RuleID, tc.want, tc.rule)
		}
	}
	if _, err := policy.Compile(policy.Config{Rules: []policy.Rule{{ID: "x", Server: "Bad_Name", Action: policy.Deny}}}); err == nil ||
		!strings.Contains(err.Error(), "server must match") {
		t.Errorf("a rule naming no valid server: %v", err)
	}
	if _, err := policy.Compile(policy.Config{Rules: []policy.Rule{{ID: "x", Action: policy.Deny}}}); err == nil ||
		!strings.Contains(err.Error(), "tool is required") {
		t.Errorf("a rule naming neither tool nor server: %v", err)
	}
}

// TestARuleNamingAToolByItsOwnNameMatchesItUnderAnyOfferedName: a tool
// whose own name the model cannot be offered as it is (a dot, a long name)
// is offered under another name; a rule naming it as its server does still
// decides its calls.
func TestARuleNamingAToolByItsOwnNameMatchesItUnderAnyOfferedName(t *testing.T) {
	t.Parallel()
	p, err := policy.Compile(policy.Config{NoDefaults: true, Rules: []policy.Rule{
		{ID: "no-delete", Server: "files", Tool: "files.delete", Action: policy.Deny},
	}})
	if err != nil {
		t.Fatal(err)
	}
	const offered = "files__files_delete-0a1b2c3d"
	run := policy.Run{MCPTools: map[string]string{offered: "files.delete", "files__files_read": "files.read"}}
	if d := p.Decide(run, offered, json.RawMessage(`{}`)); d.Action != policy.Deny || d.RuleID != "no-delete" {
		t.Errorf("%s: %s by %q, want denied by no-delete", offered, d.Action, d.RuleID)
	}
	if d := p.Decide(run, "files__files_read", json.RawMessage(`{}`)); d.Action != policy.Allow {
		t.Errorf("files__files_read: %s by %q, want allowed", d.Action, d.RuleID)
	}
	other := policy.Run{MCPTools: map[string]string{"other__files_delete-0a1b2c3d": "files.delete"}}
	if d := p.Decide(other, "other__files_delete-0a1b2c3d", json.RawMessage(`{}`)); d.Action != policy.Allow {
		t.Errorf("another server's tool of that name: %s by %q, want allowed", d.Action, d.RuleID)
	}
}
