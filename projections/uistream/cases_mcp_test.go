package uistream_test

import (
	"encoding/json"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

var (
	callIssue = events.ToolCallRef{ID: "call_7", Name: "github__create_issue", Arguments: `{"title":"Broken"}`}
	callLint  = events.ToolCallRef{ID: "call_8", Name: "lint__check", Arguments: `{}`}
	callSlow  = events.ToolCallRef{ID: "call_9", Name: "lint__slow", Arguments: `{}`}
)

// mcpStarted opens an mcp_tool_call item for call c of server.
func mcpStarted(b *logBuilder, item, resp, server, tool string, c events.ToolCallRef) {
	b.ItemStarted(item, events.ItemMCPToolCall, events.ToolCallData{ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments,
		ResponseItemID: resp, MCP: &events.MCPCall{Server: server, Tool: tool}})
}

func init() {
	// MCP calls as dynamic tool parts: progress streams as tool output, a
	// result keeps its content blocks (an image, structured content), a
	// result the server marked isError ends as output-error, a call past
	// its timeout fails.
	goldenCases["mcp_tools"] = func(t testing.TB) []events.Envelope {
		b := started(t, runA, cmdA, "file the lint findings")
		b.response(r1, 0, nil, callIssue, callLint, callSlow)
		mcpStarted(b, tool1, r1, "github", "create_issue", callIssue)
		b.Deltas(tool1, "progress 1/2: uploading\n")
		b.ToolCompleted(tool1, events.ItemMCPToolCall, callIssue, events.ToolResultData{
			Output: "Created #413.\n[image image/png, 4 bytes]",
			MCP: &events.MCPResult{Server: "github", Tool: "create_issue", DurationMs: 812,
				Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"Created #413."}`),
					json.RawMessage(`{"type":"image","mimeType":"image/png","data":"iVBORw=="}`)},
				StructuredContent: json.RawMessage(`{"number":413}`)}})
		mcpStarted(b, tool2, r1, "lint", "check", callLint)
		b.ToolCompleted(tool2, events.ItemMCPToolCall, callLint, events.ToolResultData{
			Output: "[the tool reported an error]\nno config found",
			MCP: &events.MCPResult{Server: "lint", Tool: "check", IsError: true, DurationMs: 20,
				Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"no config found"}`)}}})
		mcpStarted(b, tool3, r1, "lint", "slow", callSlow)
		b.ItemFailed(tool3, events.ItemMCPToolCall, events.ToolErrTimedOut, "MCP server lint did not answer within 2m0s")
		b.response(r2, 1, []string{"Filed #413; lint needs a config."})
		return b.Completed("Filed #413; lint needs a config.").Events()
	}
}
