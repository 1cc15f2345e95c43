package profile_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// TestAgentsYAMLWithMCPServersAndSkills loads the configuration the docs
// show and checks every field arrives.
func TestAgentsYAMLWithMCPServersAndSkills(t *testing.T) {
	t.Parallel()
	c, err := profile.Load(writeAgents(t, `
agents:
  - id: triager
    model: gpt-test
    tools: [read_file]
    mcpServers:
      - name: github
        url: https://mcp.github.example/mcp
        headers:
          Authorization: "Bearer ${GITHUB_TOKEN}"
          X-Org: acme
        callTimeout: 2m
      - name: search
        command: [node, /opt/mcp/search/index.js]
        optional: true
      - name: legacy
        url: https://old.example/sse
        transport: sse
    skills:
      - name: triage-guide
        version: ^1.2
    sandbox:
      mounts:
        - {source: /opt/mcp, target: /opt/mcp}
`))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := c.Get("triager")
	if len(p.MCPServers) != 3 || p.MCPServers[0].TransportOrDefault() != profile.TransportHTTP ||
		p.MCPServers[1].TransportOrDefault() != profile.TransportStdio || p.MCPServers[2].TransportOrDefault() != profile.TransportSSE ||
		!p.MCPServers[1].Optional || p.MCPServers[0].CallTimeoutOrDefault().Minutes() != 2 {
		t.Errorf("MCP servers %+v", p.MCPServers)
	}
	if got := p.MCPServers[0].Secrets(); len(got) != 1 || got[0] != "GITHUB_TOKEN" {
		t.Errorf("secrets named: %v", got)
	}
	if len(p.Skills) != 1 || p.Skills[0].Version != "^1.2" || len(p.Sandbox.Mounts) != 1 || !p.ResolvesAtStart() {
		t.Errorf("skills %+v, mounts %+v", p.Skills, p.Sandbox.Mounts)
	}
}

func TestMCPServersAndSkillsAreValidated(t *testing.T) {
	t.Parallel()
	base := func() profile.Profile {
		return profile.Profile{ID: "a", Model: "m", Tools: []string{"shell"}}
	}
	remote := func(headers map[string]string) profile.MCPServer {
		return profile.MCPServer{Name: "gh", URL: "https://mcp.example/mcp", Headers: headers}
	}
	cases := map[string]struct {
		edit func(*profile.Profile)
		want string
	}{
		"no command or url": {func(p *profile.Profile) { p.MCPServers = []profile.MCPServer{{Name: "x"}} }, "a command (stdio) or a url"},
		"both": {func(p *profile.Profile) {
			p.MCPServers = []profile.MCPServer{{Name: "x", URL: "https://e/x", Command: []string{"a"}}}
		}, "not both"},
		"bad name": {func(p *profile.Profile) {
			p.MCPServers = []profile.MCPServer{{Name: "Has_Under", Command: []string{"a"}}}
		}, "name must match"},
		"twice": {func(p *profile.Profile) { p.MCPServers = []profile.MCPServer{remote(nil), remote(nil)} }, "used twice"},
		"credential in the profile": {func(p *profile.Profile) {
			p.MCPServers = []profile.MCPServer{remote(map[string]string{"X-Api-Key": "sk-123"})}
		}, "must name a secret"},
		"lone dollar": {func(p *profile.Profile) {
			p.MCPServers = []profile.MCPServer{remote(map[string]string{"X-Org": "a$b"})}
		}, "lone $"},
		"reserved header": {func(p *profile.Profile) {
			p.MCPServers = []profile.MCPServer{remote(map[string]string{"Mcp-Session-Id": "${S}"})}
		}, "set by the transport"},
		"credentials in the url": {func(p *profile.Profile) { p.MCPServers = []profile.MCPServer{{Name: "x", URL: "https://u:p@e/x"}} }, "must not hold credentials"},
		"not http":               {func(p *profile.Profile) { p.MCPServers = []profile.MCPServer{{Name: "x", URL: "file:///etc/passwd"}} }, "http:// or https://"},
		"headers on stdio": {func(p *profile.Profile) {
			p.MCPServers = []profile.MCPServer{{Name: "x", Command: []string{"a"}, Headers: map[string]string{"A": "b"}}}
		}, "a stdio server gets no secret"},
		"unknown transport":          {func(p *profile.Profile) { s := remote(nil); s.Transport = "ws"; p.MCPServers = []profile.MCPServer{s} }, `transport "ws"`},
		"skill range":                {func(p *profile.Profile) { p.Skills = []profile.SkillRef{{Name: "s", Version: "not a range"}} }, "version range"},
		"skill without a reader":     {func(p *profile.Profile) { p.Tools = nil; p.Skills = []profile.SkillRef{{Name: "s"}} }, "read_file or shell"},
		"skill twice":                {func(p *profile.Profile) { p.Skills = []profile.SkillRef{{Name: "s"}, {Name: "s"}} }, "listed twice"},
		"mount over the workspace":   {func(p *profile.Profile) { p.Sandbox.Mounts = mounts("/opt/x", "/workspace/x") }, "overlaps /workspace"},
		"mount in the skills":        {func(p *profile.Profile) { p.Sandbox.Mounts = mounts("/opt/x", "/skills/x") }, "holds the run's skills"},
		"mount of a relative source": {func(p *profile.Profile) { p.Sandbox.Mounts = mounts("opt/x", "/opt/x") }, "absolute, clean host path"},
	}
	for name, tc := range cases {
		p := base()
		tc.edit(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate() = %v, want an error containing %q", name, err, tc.want)
		}
	}
	ok := base()
	ok.MCPServers = []profile.MCPServer{remote(map[string]string{"Authorization": "Bearer ${T}", "X-Price": "$$5"})}
	ok.Skills = []profile.SkillRef{{Name: "s", Version: ">= 1.0, < 2"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("a valid profile: %v", err)
	}
}

func mounts(source, target string) []compute.ReadOnlyMount {
	return []compute.ReadOnlyMount{{Source: source, Target: target}}
}

func TestHeaderTemplates(t *testing.T) {
	t.Parallel()
	parts, err := profile.ParseHeaderTemplate("Bearer ${TOKEN} for $$x ${ORG}")
	if err != nil {
		t.Fatal(err)
	}
	want := []profile.TemplatePart{{Text: "Bearer "}, {Secret: "TOKEN"}, {Text: " for $x "}, {Secret: "ORG"}}
	if len(parts) != len(want) {
		t.Fatalf("parts %+v", parts)
	}
	for i := range want {
		if parts[i] != want[i] {
			t.Errorf("part %d = %+v, want %+v", i, parts[i], want[i])
		}
	}
	for _, bad := range []string{"${", "${1X}", "${A-B}", "$X"} {
		if _, err := profile.ParseHeaderTemplate(bad); err == nil {
			t.Errorf("ParseHeaderTemplate(%q) succeeded", bad)
		}
	}
}
