package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
)

// AgentCatalog tells the API which agents a tenant may run and what each
// offers; the wiring adapts the agent profiles and the tool registry to it.
// Agent's ok is false for an agent the tenant may not run or that does not
// exist, which the API answers alike (404).
type AgentCatalog interface {
	Agents(ctx context.Context, tenantID string) []AgentProfile
	Agent(ctx context.Context, tenantID, agentID string) (AgentProfile, bool)
}

// AgentProfile is what an agent profile offers a caller.
type AgentProfile struct {
	AgentID string
	// Model is the model the agent calls.
	Model string
	// Tools are the tools the agent's runs may call, in the profile's order.
	Tools []AgentTool
	// Options are the per-run options and values the profile allows.
	Options AllowedOptions
	// Defaults are the options a run gets when it asks for none.
	Defaults events.RunOptions
	// MCPServers are the agent's MCP servers, with what the tenant's latest
	// run of the agent listed.
	MCPServers []AgentMCPServer
	// Skills are the agent's skills as a run starting now resolves them.
	Skills []AgentSkill
}

// AgentTool is one tool of an agent: what a model is told about it.
type AgentTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters" doc:"The JSON Schema of the tool's arguments (an object)."`
}

// AllowedOptions are the values of each per-run option (events.RunOptions,
// same names) a run of the agent may ask for.
type AllowedOptions struct {
	WorkingDirectory bool                  `json:"workingDirectory" doc:"Whether a run may set its working directory (inside the workspace)."`
	SafetyMode       []events.SafetyMode   `json:"safetyMode" nullable:"false" doc:"The safety modes a run may ask for."`
	ApprovalMode     []events.ApprovalMode `json:"approvalMode" nullable:"false" doc:"The approval modes a run may ask for."`
	NetworkAccess    []bool                `json:"networkAccess" nullable:"false" doc:"The networkAccess values a run may ask for."`
}

// agentManifest is the capability manifest of one agent (seed 000's
// EngineCapabilityManifest): what its runs may use and how a client may
// talk to them.
type agentManifest struct {
	AgentID           string            `json:"agentId"`
	Model             string            `json:"model,omitempty"`
	Tools             []AgentTool       `json:"tools" nullable:"false"`
	Options           AllowedOptions    `json:"options"`
	Defaults          events.RunOptions `json:"defaults" doc:"The options of a run that asks for none."`
	MCPServers        []AgentMCPServer  `json:"mcpServers" nullable:"false" doc:"The agent's MCP servers and the tools its tenant's latest run listed of each."`
	Skills            []AgentSkill      `json:"skills" nullable:"false" doc:"The agent's skills and the versions a run starting now gets."`
	PermissionModes   []string          `json:"permissionModes" nullable:"false" doc:"The approval modes (the options' approvalMode values)."`
	InputContentTypes []string          `json:"inputContentTypes" nullable:"false" doc:"The content types a user input may carry."`
	ControlOperations []string          `json:"controlOperations" nullable:"false" doc:"What a client may do to a run or session besides sending input."`
}

// controlOperations are the controls every agent's runs accept.
var controlOperations = []string{"steer", "clarification", "follow_up", "cancel", "approve", "deny", "compact",
	"session_message", "interrupt"}

func manifestOf(p AgentProfile) agentManifest {
	modes := make([]string, 0, len(p.Options.ApprovalMode))
	for _, m := range p.Options.ApprovalMode {
		modes = append(modes, string(m))
	}
	tools := p.Tools
	if tools == nil {
		tools = []AgentTool{}
	}
	servers, skills := p.MCPServers, p.Skills
	if servers == nil {
		servers = []AgentMCPServer{}
	}
	if skills == nil {
		skills = []AgentSkill{}
	}
	return agentManifest{AgentID: p.AgentID, Model: p.Model, Tools: tools, Options: p.Options, Defaults: p.Defaults,
		MCPServers: servers, Skills: skills,
		PermissionModes: modes, InputContentTypes: []string{"text"}, ControlOperations: controlOperations}
}

// agentList is the agents a tenant may run.
type agentList struct {
	Agents []agentManifest `json:"agents" nullable:"false"`
}

type listAgentsOutput struct {
	Body agentList
}

type getAgentInput struct {
	AgentID string `path:"agentId" maxLength:"64" pattern:"^[A-Za-z0-9._-]{1,64}$" doc:"The agent's id."`
}

type getAgentOutput struct {
	Body agentManifest
}

// EnableAgents lets GET /v1/agents answer from c; until it is called the
// API knows no agent.
func (a *API) EnableAgents(c AgentCatalog) {
	if c == nil {
		panic("api.EnableAgents: catalog is required")
	}
	a.agents.Store(&c)
}

func (a *API) agentCatalog() AgentCatalog {
	if c := a.agents.Load(); c != nil {
		return *c
	}
	return nil
}

func (a *API) registerAgents() {
	register(a, huma.Operation{
		OperationID: "listAgents", Method: http.MethodGet, Path: "/v1/agents",
		Summary: "List the agents",
		Description: "The capability manifest of every agent the tenant may run: its tools with their parameter " +
			"schemas, its MCP servers (with the tools and server versions the tenant's latest run of the agent listed) and " +
			"skills (with the versions a run starting now gets), the per-run options and approval modes it allows, input " +
			"content types and control operations.",
		Tags: []string{"Agents"},
	}, func(ctx context.Context, _ *struct{}) (*listAgentsOutput, error) {
		out := &listAgentsOutput{}
		out.Body.Agents = []agentManifest{}
		if c := a.agentCatalog(); c != nil {
			for _, p := range c.Agents(ctx, tenantOf(ctx)) {
				out.Body.Agents = append(out.Body.Agents, manifestOf(p))
			}
		}
		return out, nil
	})
	register(a, huma.Operation{
		OperationID: "getAgent", Method: http.MethodGet, Path: "/v1/agents/{agentId}",
		Summary:     "Get an agent's capability manifest",
		Description: "The capability manifest of one agent (as in GET /v1/agents); 404 for an agent the tenant may not run.",
		Tags:        []string{"Agents"}, Errors: []int{http.StatusNotFound},
	}, func(ctx context.Context, in *getAgentInput) (*getAgentOutput, error) {
		if c := a.agentCatalog(); c != nil {
			if p, ok := c.Agent(ctx, tenantOf(ctx), in.AgentID); ok {
				return &getAgentOutput{Body: manifestOf(p)}, nil
			}
		}
		return nil, newProblem(http.StatusNotFound, events.CodeNotFound, "agent not found")
	})
}
