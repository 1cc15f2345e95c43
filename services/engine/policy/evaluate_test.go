package policy_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/policy"
)

func TestEvaluate(t *testing.T) {
	t.Parallel()
	rule := func(id, tool, argument, pattern, unless string, action policy.Action) policy.Rule {
		return policy.Rule{ID: id, Tool: tool, Argument: argument, Pattern: pattern, Unless: unless, Action: action}
	}
	internalCurl := rule("internal-curl", "shell", "command", `^curl https://internal\.example/`, "", policy.Allow)
	gitWrites := rule("git-writes", "shell", "command", `^git `, `^git (status|log|diff)\b`, policy.RequireApproval)
	anyTool := rule("no-secrets", "*", "", `secret`, "", policy.Deny)
	longTimeout := rule("long-timeout", "shell", "timeoutSeconds", `^[0-9]{4,}$`, "", policy.RequireApproval)
	everyAsk := rule("every-ask", "ask_user", "", "", "", policy.Deny)
	wholeText := rule("whole-text", "shell", "", `rm -rf`, "", policy.Deny)
	anyPath := rule("any-path", "write_file", "path", "", "", policy.RequireApproval)
	nested := rule("nested", "mcp", "filter", `"a": ?1`, "", policy.Deny)

	tests := []struct {
		name     string
		cfg      policy.Config
		tool     string
		args     string
		want     policy.Action
		wantRule string
	}{
		{"no rule matches: allow", policy.Config{}, "ask_user", `{"question":"ok?"}`, policy.Allow, ""},
		{"no rule matches: configured default", policy.Config{NoDefaults: true, Default: policy.Deny}, "shell", `{"command":"ls"}`, policy.Deny, ""},
		{"profile rules before built-in ones", policy.Config{Rules: []policy.Rule{internalCurl}}, "shell", `{"command":"curl https://internal.example/x"}`, policy.Allow, "internal-curl"},
		{"built-in rule after profile rules", policy.Config{Rules: []policy.Rule{internalCurl}}, "shell", `{"command":"curl https://other.example/"}`, policy.RequireApproval, "default.network"},
		{"no defaults", policy.Config{NoDefaults: true}, "shell", `{"command":"rm -rf /"}`, policy.Allow, ""},
		{"first match decides", policy.Config{Rules: []policy.Rule{anyTool, gitWrites}}, "shell", `{"command":"git push secret"}`, policy.Deny, "no-secrets"},
		{"unless excludes", policy.Config{Rules: []policy.Rule{gitWrites}}, "shell", `{"command":"git status"}`, policy.Allow, ""},
		{"unless lets others through", policy.Config{Rules: []policy.Rule{gitWrites}}, "shell", `{"command":"git commit -m x"}`, policy.RequireApproval, "git-writes"},
		{"star matches every tool", policy.Config{Rules: []policy.Rule{anyTool}}, "some_mcp_tool", `{"q":"the secret"}`, policy.Deny, "no-secrets"},
		{"other tool", policy.Config{Rules: []policy.Rule{gitWrites}}, "read_file", `{"path":"git x"}`, policy.Allow, ""},
		{"empty pattern matches every call", policy.Config{Rules: []policy.Rule{everyAsk}}, "ask_user", `{}`, policy.Deny, "every-ask"},
		{"empty pattern needs the argument", policy.Config{Rules: []policy.Rule{anyPath}}, "write_file", `{"content":"x"}`, policy.Allow, ""},
		{"empty pattern with the argument", policy.Config{Rules: []policy.Rule{anyPath}}, "write_file", `{"path":"a.txt"}`, policy.RequireApproval, "any-path"},
		{"number argument as JSON text", policy.Config{Rules: []policy.Rule{longTimeout}}, "shell", `{"command":"ls","timeoutSeconds": 3600}`, policy.RequireApproval, "long-timeout"},
		{"small number argument", policy.Config{Rules: []policy.Rule{longTimeout}}, "shell", `{"command":"ls","timeoutSeconds":60}`, policy.Allow, ""},
		{"object argument as JSON text", policy.Config{Rules: []policy.Rule{nested}}, "mcp", `{"filter": {"a": 1}}`, policy.Deny, "nested"},
		{"whole text is matched as produced", policy.Config{Rules: []policy.Rule{anyTool}}, "shell", `{"command":"echo \u0073ecret"}`, policy.Allow, ""},
		{"invalid JSON: argument rules cannot match", policy.Config{}, "shell", `{"command":"rm -rf /"`, policy.Allow, ""},
		{"invalid JSON: whole-text rules can", policy.Config{Rules: []policy.Rule{wholeText}}, "shell", `{"command":"rm -rf /"`, policy.Deny, "whole-text"},
		{"not an object", policy.Config{}, "shell", `["rm -rf /"]`, policy.Allow, ""},
		{"trailing garbage", policy.Config{}, "shell", `{"command":"rm -rf /"} x`, policy.Allow, ""},
		{"empty arguments", policy.Config{Rules: []policy.Rule{everyAsk}}, "ask_user", ``, policy.Deny, "every-ask"},
		{"string escapes are decoded", policy.Config{}, "shell", `{"command":"rm -rf \u002f"}`, policy.Deny, "default.rm-root"},
		{"argument names match case-insensitively", policy.Config{}, "shell", `{"Command":"rm -rf /"}`, policy.Deny, "default.rm-root"},
		{"the last duplicate wins", policy.Config{}, "shell", `{"command":"ls","command":"rm -rf /"}`, policy.Deny, "default.rm-root"},
		{"an earlier duplicate is ignored", policy.Config{}, "shell", `{"command":"rm -rf /","command":"ls"}`, policy.Allow, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := policy.Compile(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			d := p.Evaluate(tt.tool, json.RawMessage(tt.args))
			if d.Action != tt.want || d.RuleID != tt.wantRule {
				t.Fatalf("Evaluate = %+v, want %s by %q", d, tt.want, tt.wantRule)
			}
			if d.Reason == "" {
				t.Error("no reason")
			}
		})
	}
}

func TestEvaluateReason(t *testing.T) {
	t.Parallel()
	p, err := policy.Compile(policy.Config{Rules: []policy.Rule{
		{ID: "said", Tool: "a", Action: policy.Deny, Reason: "Tool a is retired."},
		{ID: "unsaid", Tool: "b", Action: policy.RequireApproval},
	}, Default: policy.Deny})
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]string{
		"a": "Tool a is retired.",
		"b": `policy rule "unsaid" decides require_approval`,
		"c": "no policy rule matched; the default is deny",
	} {
		if got := p.Evaluate(tool, json.RawMessage(`{}`)).Reason; got != want {
			t.Errorf("reason for %s = %q, want %q", tool, got, want)
		}
	}
}

func TestRulesAndSnapshot(t *testing.T) {
	t.Parallel()
	own := []policy.Rule{
		{ID: "own-a", Tool: "shell", Argument: "command", Pattern: `^make deploy`, Action: policy.Deny},
		{ID: "own-b", Tool: "*", Action: policy.RequireApproval, Pattern: "prod"},
	}
	p, err := policy.Compile(policy.Config{Rules: own, Default: policy.RequireApproval})
	if err != nil {
		t.Fatal(err)
	}
	rules := p.Rules()
	defaults := policy.DefaultRules()
	if len(rules) != len(own)+len(defaults) || rules[0].ID != "own-a" || rules[1].ID != "own-b" || rules[2].ID != defaults[0].ID {
		t.Fatalf("Rules = %v, want the profile's rules then the built-in ones", ids(rules))
	}
	rules[0].Action = policy.Allow
	if p.Rules()[0].Action != policy.Deny {
		t.Fatal("Rules returns shared storage")
	}

	// A snapshot names the built-in set by hash instead of copying it.
	snap := p.Snapshot()
	if snap.NoDefaults || snap.Default != policy.RequireApproval || len(snap.Rules) != len(own) || snap.Builtins != policy.BuiltinsHash() {
		t.Fatalf("Snapshot = %d rules, noDefaults %v, default %s, builtins %q", len(snap.Rules), snap.NoDefaults, snap.Default, snap.Builtins)
	}
	// A set this build does not know cannot be honoured: compiling fails
	// rather than deciding with other rules than the snapshot's.
	if _, err := policy.Compile(policy.Config{Builtins: "sha256:00"}); err == nil || !strings.Contains(err.Error(), "not known to this build") {
		t.Fatalf("Compile with an unknown built-in set: %v", err)
	}
	// A snapshot survives a round trip through JSON and decides as p does.
	raw, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var decoded policy.Config
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	frozen, err := policy.Compile(decoded)
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range defaultCases() {
		for _, c := range group {
			if got, want := frozen.Evaluate(c.tool, c.arguments(t)), p.Evaluate(c.tool, c.arguments(t)); got != want {
				t.Errorf("%s %q: snapshot decides %+v, policy %+v", c.tool, c.arg, got, want)
			}
		}
	}

	bare, err := policy.Compile(policy.Config{Rules: own, NoDefaults: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(bare.Rules()); strings.Join(got, ",") != "own-a,own-b" {
		t.Fatalf("Rules without defaults = %v", got)
	}
}

func ids(rules []policy.Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.ID
	}
	return out
}

// TestEvaluateConcurrent shares one Policy between goroutines; run with
// -race.
func TestEvaluateConcurrent(t *testing.T) {
	t.Parallel()
	p, err := policy.Compile(policy.Config{Rules: []policy.Rule{
		{ID: "timeout", Tool: "shell", Argument: "timeoutSeconds", Pattern: "^9", Action: policy.Deny},
	}})
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"command":"curl x","timeoutSeconds":5}`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if d := p.Evaluate("shell", args); d.RuleID != "default.network" {
					t.Errorf("Evaluate = %+v", d)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkEvaluate(b *testing.B) {
	p, err := policy.Compile(policy.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, command string }{
		{"short", "go test ./... 2>&1 | tail -50"},
		{"script-8KiB", strings.Repeat("echo line >> /workspace/out.txt\n", 256)},
	} {
		raw, err := json.Marshal(map[string]string{"command": bc.command})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if d := p.Evaluate("shell", raw); d.Action != policy.Allow {
					b.Fatalf("Evaluate = %+v", d)
				}
			}
		})
	}
}
