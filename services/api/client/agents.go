package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/xbot-runtime/xbot/events"
)

// AgentTool is one tool of an agent.
type AgentTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the tool's arguments.
	Parameters json.RawMessage `json:"parameters"`
}

// AllowedOptions are the per-run option values an agent allows.
type AllowedOptions struct {
	WorkingDirectory bool                  `json:"workingDirectory"`
	SafetyMode       []events.SafetyMode   `json:"safetyMode"`
	ApprovalMode     []events.ApprovalMode `json:"approvalMode"`
	NetworkAccess    []bool                `json:"networkAccess"`
}

// AgentMCPServer is one MCP server of an agent, with what the tenant's
// latest run of the agent listed of it (nil before any run).
type AgentMCPServer struct {
	Name      string           `json:"name"`
	Transport string           `json:"transport"`
	Optional  bool             `json:"optional"`
	Listed    *AgentMCPListing `json:"listed,omitempty"`
}

// AgentMCPListing is what a run found of an MCP server when it started.
type AgentMCPListing struct {
	RunID           string         `json:"runId"`
	ListedAt        int64          `json:"listedAt"`
	ServerName      string         `json:"serverName,omitempty"`
	ServerVersion   string         `json:"serverVersion,omitempty"`
	ProtocolVersion string         `json:"protocolVersion,omitempty"`
	Skipped         string         `json:"skipped,omitempty"`
	Tools           []AgentMCPTool `json:"tools"`
}

// AgentMCPTool is one tool of an MCP server.
type AgentMCPTool struct {
	Name        string          `json:"name"`
	Tool        string          `json:"tool"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// AgentSkill is one skill of an agent and the version a run starting now
// gets (empty, with Problem, when none is in range).
type AgentSkill struct {
	Name         string `json:"name"`
	VersionRange string `json:"versionRange"`
	Version      string `json:"version,omitempty"`
	ID           string `json:"id,omitempty"`
	Digest       string `json:"digest,omitempty"`
	Description  string `json:"description,omitempty"`
	Problem      string `json:"problem,omitempty"`
}

// Agent is an agent's capability manifest.
type Agent struct {
	AgentID           string            `json:"agentId"`
	Model             string            `json:"model,omitempty"`
	Tools             []AgentTool       `json:"tools"`
	Options           AllowedOptions    `json:"options"`
	Defaults          events.RunOptions `json:"defaults"`
	MCPServers        []AgentMCPServer  `json:"mcpServers"`
	Skills            []AgentSkill      `json:"skills"`
	PermissionModes   []string          `json:"permissionModes"`
	InputContentTypes []string          `json:"inputContentTypes"`
	ControlOperations []string          `json:"controlOperations"`
}

// Agents lists the agents the tenant may run (GET /v1/agents).
func (c *Client) Agents(ctx context.Context) ([]Agent, error) {
	var out struct {
		Agents []Agent `json:"agents"`
	}
	err := c.call(ctx, http.MethodGet, "/v1/agents", nil, &out)
	return out.Agents, err
}

// GetAgent reads one agent's manifest (GET /v1/agents/{agentId}).
func (c *Client) GetAgent(ctx context.Context, agentID string) (Agent, error) {
	var out Agent
	err := c.call(ctx, http.MethodGet, "/v1/agents/"+url.PathEscape(agentID), nil, &out)
	return out, err
}
