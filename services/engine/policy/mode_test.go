package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/policy"
)

// TestDecideApprovalModes: ask leaves a call that needs approval waiting,
// bypass runs it, auto runs it only when it stays in the workspace; a
// denial holds in every mode.
func TestDecideApprovalModes(t *testing.T) {
	t.Parallel()
	p, err := policy.Compile(policy.Config{NoDefaults: true, Rules: []policy.Rule{
		{ID: "secrets", Tool: "write_file", Argument: "path", Pattern: "^/workspace/secrets/", Action: policy.Deny},
		{ID: "writes", Tool: "write_file", Action: policy.RequireApproval},
		{ID: "lists", Tool: "list_files", Action: policy.RequireApproval},
		{ID: "commands", Tool: "shell", Argument: "command", Pattern: "^make", Action: policy.RequireApproval},
		{ID: "no-rm", Tool: "shell", Argument: "command", Pattern: "rm -rf", Action: policy.Deny},
		{ID: "mcp", Tool: "fetch_url", Action: policy.RequireApproval},
	}})
	if err != nil {
		t.Fatal(err)
	}
	confined := policy.Run{Mode: events.ApprovalAuto, ConfinedCommands: true}
	cases := []struct {
		name string
		run  policy.Run
		tool string
		args string
		want policy.Action
	}{
		{"ask waits", policy.Run{Mode: events.ApprovalAsk}, "write_file", `{"path":"a.txt"}`, policy.RequireApproval},
		{"no mode is ask", policy.Run{}, "write_file", `{"path":"a.txt"}`, policy.RequireApproval},
		{"bypass runs", policy.Run{Mode: events.ApprovalBypass}, "fetch_url", `{"url":"x"}`, policy.Allow},
		{"bypass keeps denials", policy.Run{Mode: events.ApprovalBypass}, "shell", `{"command":"rm -rf /"}`, policy.Deny},
		{"auto: write in the workspace", confined, "write_file", `{"path":"a.txt"}`, policy.Allow},
		{"auto: write outside the workspace", confined, "write_file", `{"path":"/sessions/s/context/a"}`, policy.RequireApproval},
		{"auto: escape by ..", confined, "write_file", `{"path":"../sessions/s/context/a"}`, policy.RequireApproval},
		{"auto: list the working directory", policy.Run{Mode: events.ApprovalAuto, Dir: "/workspace/src"}, "list_files", `{}`, policy.Allow},
		{"auto: confined command", confined, "shell", `{"command":"make"}`, policy.Allow},
		{"auto: unconfined command", policy.Run{Mode: events.ApprovalAuto}, "shell", `{"command":"make"}`, policy.RequireApproval},
		{"auto: other tool asks", confined, "fetch_url", `{"url":"x"}`, policy.RequireApproval},
		{"auto keeps denials", confined, "shell", `{"command":"rm -rf x"}`, policy.Deny},
		{"working directory resolves paths for rules", policy.Run{Mode: events.ApprovalBypass, Dir: "/workspace/secrets"},
			"write_file", `{"path":"key.pem"}`, policy.Deny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := p.Decide(tc.run, tc.tool, json.RawMessage(tc.args)); got.Action != tc.want {
				t.Fatalf("Decide = %+v, want %s", got, tc.want)
			}
		})
	}
}

// TestEvaluateInResolvesAgainstTheWorkingDirectory: a rule on a path sees
// a relative path joined to the run's working directory, not /workspace.
func TestEvaluateInResolvesAgainstTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	p, err := policy.Compile(policy.Config{Rules: []policy.Rule{
		{ID: "deploy", Tool: "write_file", Argument: "path", Pattern: "^/workspace/deploy/", Action: policy.Deny}}})
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"path":"prod.yaml","content":"x"}`)
	if d := p.EvaluateIn("/workspace/deploy", "write_file", args); d.Action != policy.Deny {
		t.Fatalf("EvaluateIn(/workspace/deploy) = %+v, want deny", d)
	}
	if d := p.Evaluate("write_file", args); d.Action == policy.Deny {
		t.Fatalf("Evaluate (in /workspace) = %+v, want not denied", d)
	}
}
