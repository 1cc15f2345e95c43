package agentloop

import (
	"path"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/policy"
)

// workspaceDir is the workspace's sandbox path (compute's layout).
const workspaceDir = "/workspace"

// network reports whether the run's tool calls may use the network: the
// effective networkAccess, which the profile's sandbox.network bounds.
func (r *execution) network() bool {
	return r.opts.NetworkAccess != nil && *r.opts.NetworkAccess && r.p.Sandbox.Network
}

// policyRun is what the policy needs of the run's options: where relative
// paths resolve, the approval mode, and whether the sandbox confines a
// command to the workspace (read-only or workspace-write, network off).
func (r *execution) policyRun() policy.Run {
	return policy.Run{
		Dir:              path.Join(workspaceDir, r.opts.WorkingDirectory),
		Mode:             r.opts.ApprovalMode,
		ConfinedCommands: r.opts.SafetyMode != events.SafetyDangerFullAccess && !r.network(),
		MCPTools:         r.mcpNames,
	}
}
