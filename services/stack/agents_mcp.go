package stack

import (
	"context"
	"encoding/json"

	"go.uber.org/zap"

	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// snapshotReader finds the latest snapshot of a tenant's runs of an agent
// (postgres.Queries).
type snapshotReader interface {
	LatestAgentSnapshot(ctx context.Context, tenantID, agentID string) (pgview.AgentSnapshot, bool, error)
}

// mcpServers are p's MCP servers, each with what the tenant's latest run of
// the agent listed of it.
func (c agentCatalog) mcpServers(ctx context.Context, tenantID string, p profile.Profile) []api.AgentMCPServer {
	if len(p.MCPServers) == 0 {
		return nil
	}
	listed := c.latestListing(ctx, tenantID, p.ID)
	out := make([]api.AgentMCPServer, 0, len(p.MCPServers))
	for _, srv := range p.MCPServers {
		out = append(out, api.AgentMCPServer{Name: srv.Name, Transport: srv.TransportOrDefault(), Optional: srv.Optional,
			Listed: listed[srv.Name]})
	}
	return out
}

// latestListing is what the tenant's latest started run of agentID froze of
// its MCP servers, by server name (empty when there is no such run, or it
// cannot be read: the manifest then shows no listing).
func (c agentCatalog) latestListing(ctx context.Context, tenantID, agentID string) map[string]*api.AgentMCPListing {
	out := map[string]*api.AgentMCPListing{}
	if c.snapshots == nil {
		return out
	}
	snap, ok, err := c.snapshots.LatestAgentSnapshot(ctx, tenantID, agentID)
	if err != nil && c.log != nil {
		c.log.Warn("reading an agent's latest snapshot failed", zap.String("agent_id", agentID), zap.Error(err))
	}
	var frozen profile.Snapshot
	if !ok || json.Unmarshal(snap.Snapshot, &frozen) != nil {
		return out
	}
	for _, s := range frozen.MCPServers {
		l := &api.AgentMCPListing{RunID: snap.RunID, ListedAt: snap.FrozenAt, ServerName: s.ServerName,
			ServerVersion: s.ServerVersion, ProtocolVersion: s.ProtocolVersion, Skipped: s.Skipped,
			Tools: make([]api.AgentMCPTool, 0, len(s.Tools))}
		for _, t := range s.Tools {
			l.Tools = append(l.Tools, api.AgentMCPTool{Name: t.Name, Tool: t.Tool, Title: t.Title, Description: t.Description,
				Parameters: t.InputSchema, Annotations: t.Annotations})
		}
		out[s.Name] = l
	}
	return out
}

// skillsOf are p's skills, each resolved in the skill store now.
func (c agentCatalog) skillsOf(p profile.Profile) []api.AgentSkill {
	if len(p.Skills) == 0 {
		return nil
	}
	out := make([]api.AgentSkill, 0, len(p.Skills))
	for _, ref := range p.Skills {
		s := api.AgentSkill{Name: ref.Name, VersionRange: ref.Version}
		if c.skills == nil {
			s.Problem = "no skill store is configured (skills_dir)"
		} else if v, err := c.skills.Resolve(ref); err != nil {
			s.Problem = err.Error()
		} else {
			s.Version, s.ID, s.Digest, s.Description = v.Version, v.ID, v.Digest, v.Description
		}
		out = append(out, s)
	}
	return out
}
