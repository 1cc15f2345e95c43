package systemtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// MCP calls under the agent's policy, approvals and grants, as built-in
// tools are.

func TestMCPCallsAreGovernedByPolicyRulesNamingServersAndTools(t *testing.T) {
	t.Parallel()
	remote, _ := remoteServer(t)
	count := filepath.Join(t.TempDir(), "count")
	agent := profile.Profile{ID: "gov", Model: profile.ModelScripted, MCPServers: []profile.MCPServer{remote},
		Policy: policy.Config{Rules: []policy.Rule{
			{ID: "no-headers", Server: "remote", Tool: "headers", Action: policy.Deny, Reason: "headers are private"},
			{ID: "remote-asks", Server: "remote", Action: policy.RequireApproval, Reason: "remote calls need a person"},
		}},
		Script: []profile.Turn{
			{ToolCalls: []profile.ScriptedCall{{Name: "remote__headers", Arguments: `{}`},
				{Name: "remote__count", Arguments: fmt.Sprintf(`{"file":%q}`, count)}}},
			{ToolCalls: call1("remote__count", fmt.Sprintf(`{"file":%q}`, count))}, // the run's grant covers it
			{Text: "done"},
		}}
	e, st, _ := mcpEnv(t, agent)
	runID := create(t, st, "gov", "go", "gov-1").RunID
	waitStatus(t, st, runID, "paused", 20*time.Second)
	if n := readLines(t, count); n != 0 {
		t.Fatalf("the call awaiting approval ran %d times", n)
	}
	asks := eventsOf(t, st, runID, events.ItemAwaitingApproval)
	ask := payloadOf[events.ItemAwaitingApprovalPayload](t, asks[0])
	if len(asks) != 1 || ask.ToolName != "remote__count" || ask.RuleID != "remote-asks" || ask.ItemType != events.ItemMCPToolCall {
		t.Fatalf("awaiting approval: %+v", ask)
	}
	decide(t, st, runID, asks[0].ItemID, "allow", "run", "gov-1-allow")
	waitStatus(t, st, runID, "completed", 20*time.Second)
	e.invariants(st)
	if n := readLines(t, count); n != 2 {
		t.Errorf("the approved call and the one its grant covers ran %d times, want twice", n)
	}
	if n := countType(t, st, runID, events.ItemAwaitingApproval); n != 1 {
		t.Errorf("%d calls waited for approval, want only the first (the grant covers the second)", n)
	}
	if f := mcpFailures(t, st, runID)["headers"]; f.ErrorCode != events.ToolErrBlockedByPolicy || f.RuleID != "no-headers" {
		t.Errorf("the denied call failed %+v", f)
	}
}

// dottedServer is a Go SDK server whose tools' names hold a dot, which the
// model is offered in another spelling (mcp.ModelName): files.delete and
// files.read each write the file they are given.
func dottedServer(t *testing.T) profile.MCPServer {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "dotted", Version: "1"}, nil)
	type in struct {
		File string `json:"file"`
	}
	for _, name := range []string{"files.delete", "files.read"} {
		sdk.AddTool(s, &sdk.Tool{Name: name}, func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
			err := os.WriteFile(a.File, []byte(name), 0o600)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " ran"}}}, nil, err
		})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return profile.MCPServer{Name: "files", URL: ts.URL}
}

// TestMCPPolicyRuleNamingAToolByItsOwnNameAppliesUnderItsOfferedName: a
// deny rule naming a server's tool as the server does decides its calls
// although the model calls it by another name.
func TestMCPPolicyRuleNamingAToolByItsOwnNameAppliesUnderItsOfferedName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	deleted, read := filepath.Join(dir, "deleted"), filepath.Join(dir, "read")
	agent := profile.Profile{ID: "dots", Model: profile.ModelScripted, MCPServers: []profile.MCPServer{dottedServer(t)},
		Policy: policy.Config{NoDefaults: true, Rules: []policy.Rule{
			{ID: "no-delete", Server: "files", Tool: "files.delete", Action: policy.Deny, Reason: "nothing is deleted"},
		}},
		Script: []profile.Turn{
			{ToolCalls: []profile.ScriptedCall{
				{Name: mcp.ModelName("files", "files.delete"), Arguments: fmt.Sprintf(`{"file":%q}`, deleted)},
				{Name: mcp.ModelName("files", "files.read"), Arguments: fmt.Sprintf(`{"file":%q}`, read)}}},
			{Text: "done"},
		}}
	e, st, _ := mcpEnv(t, agent)
	runID := runUntil(t, st, "dots", "go", "dots-1", "completed", 30*time.Second)
	e.invariants(st)
	if f := mcpFailures(t, st, runID)["files.delete"]; f.ErrorCode != events.ToolErrBlockedByPolicy || f.RuleID != "no-delete" {
		t.Errorf("the call the rule denies failed %+v", f)
	}
	if _, err := os.Stat(deleted); err == nil {
		t.Error("the denied tool ran")
	}
	if _, err := os.Stat(read); err != nil {
		t.Errorf("the allowed tool did not run: %v", err)
	}
}
