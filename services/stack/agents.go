package stack

import (
	"context"
	"slices"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/skills"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// agentCatalog shows the agent profiles and the tool registry to the API
// (api.AgentCatalog). Profiles are global today: every tenant may run every
// agent.
type agentCatalog struct {
	profiles *profile.Catalog
	tools    *tools.Registry
	// snapshots and skills show agents' MCP servers and skills; nil: none.
	snapshots snapshotReader
	skills    *skills.Store
	log       *zap.Logger
}

var _ api.AgentCatalog = agentCatalog{}

// Agents returns every agent, in the catalog's order.
func (c agentCatalog) Agents(ctx context.Context, tenantID string) []api.AgentProfile {
	var out []api.AgentProfile
	for _, id := range c.profiles.IDs() {
		if p, ok := c.Agent(ctx, tenantID, id); ok {
			out = append(out, p)
		}
	}
	return out
}

// Agent returns the agent agentID offers.
func (c agentCatalog) Agent(ctx context.Context, tenantID, agentID string) (api.AgentProfile, bool) {
	p, ok := c.profiles.Get(agentID)
	if !ok {
		return api.AgentProfile{}, false
	}
	names := p.Tools
	// The engine adds read_file_part to a profile with tools or MCP servers
	// (agentloop's Snapshot), so the model can read outputs offloaded from
	// its context.
	if (len(names) > 0 || len(p.MCPServers) > 0) && !slices.Contains(names, tools.ReadFilePartName) {
		if _, ok := c.tools.Get(tools.ReadFilePartName); ok {
			names = append(slices.Clone(names), tools.ReadFilePartName)
		}
	}
	specs, err := c.tools.Specs(names)
	if err != nil {
		return api.AgentProfile{}, false // checkProfiles refused such a profile at startup
	}
	out := api.AgentProfile{AgentID: p.ID, Model: p.Model, Tools: make([]api.AgentTool, 0, len(specs)),
		Options: allowedOptions(p), Defaults: defaultOptions(p),
		MCPServers: c.mcpServers(ctx, tenantID, p), Skills: c.skillsOf(p)}
	for _, s := range specs {
		out.Tools = append(out.Tools, api.AgentTool{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	return out, true
}

// allowedOptions are the per-run options profile p allows (its
// runOptions, with their defaults; the network only when its sandbox has it).
func allowedOptions(p profile.Profile) api.AllowedOptions {
	o := p.RunOptions.WithDefaults()
	network := []bool{false}
	if p.Sandbox.Network {
		network = []bool{false, true}
	}
	return api.AllowedOptions{WorkingDirectory: true,
		SafetyMode:    slices.Clone(o.SafetyModes),
		ApprovalMode:  slices.Clone(o.ApprovalModes),
		NetworkAccess: network}
}

// defaultOptions are the options of a run of p that asks for none, as the
// executor freezes them (profile.Profile.EffectiveOptions).
func defaultOptions(p profile.Profile) events.RunOptions {
	eff, err := p.EffectiveOptions(nil)
	if err != nil {
		return events.RunOptions{}
	}
	return eff
}
