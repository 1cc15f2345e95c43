package systemtest_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/skills"
	"github.com/xbot-runtime/xbot/services/stack"
)

// Discovery (issue 19): GET /v1/agents lists each agent's MCP servers, with
// what its tenant's latest run listed of them, and its skills as a run
// starting now resolves them.

func TestAgentsEndpointListsMCPServersTheirToolsAndSkills(t *testing.T) {
	t.Parallel()
	remote, _ := remoteServer(t)
	store, err := skills.New(filepath.Join(t.TempDir(), "skills"), skills.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	v := addSkill(t, store, "demo", "2.3.0", "# Use it\n")
	agent := profile.Profile{ID: "capable", Model: profile.ModelScripted, Tools: []string{"read_file"},
		MCPServers: []profile.MCPServer{remote}, Skills: []profile.SkillRef{{Name: "demo", Version: "^2"}, {Name: "absent"}},
		Script: []profile.Turn{{Text: "ok"}}}
	e := newEnv(t).withAgents(agent)
	st := e.startWith("all", func(o *stack.Options) {
		o.Compute, o.MCPSecrets, o.Skills = localCompute(t, t.TempDir()), map[string]string{"TOKEN": mcpSecret}, store
	})
	before, err := apiOf(t, st).GetAgent(t.Context(), "capable")
	if err != nil {
		t.Fatal(err)
	}
	if len(before.MCPServers) != 1 || before.MCPServers[0].Name != "remote" || before.MCPServers[0].Transport != "http" ||
		before.MCPServers[0].Listed != nil {
		t.Errorf("MCP servers before any run: %+v", before.MCPServers)
	}
	if len(before.Skills) != 2 || before.Skills[0].ID != v.ID || before.Skills[0].Digest != v.Digest ||
		before.Skills[1].Version != "" || !strings.Contains(before.Skills[1].Problem, "no version") {
		t.Errorf("skills %+v", before.Skills)
	}
	// The skill "absent" has no version: the run cannot start.
	runID := runUntil(t, st, "capable", "go", "capable-1", "failed", 20*time.Second)
	if f := payloads[events.RunFailedPayload](t, st, runID); len(f) != 1 || !strings.Contains(f[0].Message, "skill absent") {
		t.Errorf("the run without its skill failed %+v", f)
	}
	addSkill(t, store, "absent", "0.1.0", "x")
	runUntil(t, st, "capable", "go", "capable-2", "completed", 20*time.Second)
	after, err := apiOf(t, st).GetAgent(t.Context(), "capable")
	if err != nil {
		t.Fatal(err)
	}
	l := after.MCPServers[0].Listed
	if l == nil || l.ServerVersion != mcptest.Version || len(l.Tools) != len(mcptest.Tools) ||
		!slices.ContainsFunc(l.Tools, func(t client.AgentMCPTool) bool { return t.Name == "remote__echo" && len(t.Parameters) > 0 }) {
		t.Errorf("the listing after a run: %+v", l)
	}
	other, err := apiClient(t, st, otherToken, nil).GetAgent(t.Context(), "capable")
	if err != nil {
		t.Fatal(err)
	}
	if other.MCPServers[0].Listed != nil {
		t.Errorf("another tenant sees this tenant's run's listing: %+v", other.MCPServers[0].Listed)
	}
	e.invariants(st)
}
