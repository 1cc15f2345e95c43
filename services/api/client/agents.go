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

// Agent is an agent's capability manifest.
type Agent struct {
	AgentID           string            `json:"agentId"`
	Model             string            `json:"model,omitempty"`
	Tools             []AgentTool       `json:"tools"`
	Options           AllowedOptions    `json:"options"`
	Defaults          events.RunOptions `json:"defaults"`
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
