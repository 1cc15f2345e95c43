package policy_test

import (
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/policy"
)

// spellings are ways to name /workspace/.ssh/id_rsa that the file tools open
// as that file.
var spellings = []string{
	"/workspace/.ssh/id_rsa", "/workspace/.ssh//id_rsa", "/workspace//.ssh/id_rsa",
	"/workspace/./.ssh/id_rsa", "/workspace/.ssh/./id_rsa", "/workspace/x/../.ssh/id_rsa",
	"//workspace/.ssh/id_rsa", ".ssh/id_rsa", "./.ssh//id_rsa", "x/../.ssh/id_rsa",
}

func pathCases() [][]call {
	const (
		readCreds  = "default.credentials.read-file"
		partCreds  = "default.credentials.read-file-part"
		shellCreds = "default.credentials"
		outside    = "default.write-outside-workspace.write-file"
	)
	return [][]call{
		read(readCreds, spellings...),
		readPart(partCreds, spellings...),
		read(readCreds, "/etc//shadow", "/etc/./shadow", "/tmp/../etc/shadow", "../etc/shadow",
			"/proc/self//environ", "/workspace/../home/u/.aws//credentials"),
		sh(shellCreds, "cat /workspace/.ssh//id_rsa", "cat /workspace/./.ssh/id_rsa", "cat /etc//shadow",
			"cat ~/.ssh/.//id_ed25519"),
		write(outside, "/workspace/../etc/passwd", "/workspace/x/../../etc/cron.d/x", "../x", "/workspace/../../x",
			"//etc/passwd"),
		read(allowed, "/workspace/.sshrc", "/workspace/ssh//id_rsa.pub.txt", "/workspace/a//b"),
		write(allowed, "/workspace//a", "/workspace/x/../y", "a/./b"),
	}
}

func TestRulesMatchCleanedPaths(t *testing.T) {
	t.Parallel()
	p, err := policy.Compile(policy.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range slices.Concat(pathCases()...) {
		t.Run(c.tool+" "+c.arg, func(t *testing.T) {
			t.Parallel()
			d := p.Evaluate(c.tool, c.arguments(t))
			if d.RuleID != c.want {
				t.Fatalf("decided by %q (%s), want %q", d.RuleID, d.Action, c.want)
			}
		})
	}
}

// TestAllowRuleSeesResolvedPath checks an allow rule on a path tool cannot
// be satisfied by a spelling that leaves the allowed tree.
func TestAllowRuleSeesResolvedPath(t *testing.T) {
	t.Parallel()
	p, err := policy.Compile(policy.Config{Default: policy.Deny, NoDefaults: true, Rules: []policy.Rule{
		{ID: "allow-public", Tool: "read_file", Argument: "path", Pattern: `^/workspace/public/`, Action: policy.Allow},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]policy.Action{
		"/workspace/public/a.txt":            policy.Allow,
		"public/a.txt":                       policy.Allow,
		"/workspace/public/../secret/a.txt":  policy.Deny,
		"/workspace/public/../../etc/passwd": policy.Deny,
	} {
		if d := p.Evaluate("read_file", call{tool: "read_file", arg: arg}.arguments(t)); d.Action != want {
			t.Errorf("read_file %s: %s by %q, want %s", arg, d.Action, d.RuleID, want)
		}
	}
}
