package profile

import (
	"encoding/json"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// MCPServerSnapshot is one MCP server as a run's snapshot freezes it:
// what it said of itself and the tools it listed when the run started.
type MCPServerSnapshot struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// ServerName, ServerVersion and ProtocolVersion are what the server
	// answered to the handshake (its serverInfo).
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Tools are its tools, in the order it listed them.
	Tools []MCPTool `json:"tools"`
	// Skipped says why an optional server was left out of the run.
	Skipped string `json:"skipped,omitempty"`
}

// MCPTool is one tool of an MCP server.
type MCPTool struct {
	// Name is the name the model is offered: <server>__<tool>, made safe
	// for model providers.
	Name string `json:"name"`
	// Tool is the tool's name on its server.
	Tool        string          `json:"tool"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the schema of its structured results, if it has one.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are the server's hints (readOnlyHint, destructiveHint,
	// idempotentHint, openWorldHint, title).
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// Spec is what the model is offered of the tool: its name, its description
// (its title when it has none) and its input schema.
func (t MCPTool) Spec() model.ToolSpec {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return model.ToolSpec{Name: t.Name, Description: desc, Parameters: t.InputSchema}
}
