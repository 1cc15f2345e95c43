package policy

import (
	"encoding/json"
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// commandTools are the built-in tools that run a command in the sandbox.
var commandTools = map[string]bool{"shell": true}

// Run is what a run's options tell the policy about its calls.
type Run struct {
	// Dir is the run's working directory, a clean absolute sandbox path;
	// "" is /workspace.
	Dir string
	// Mode is the run's approval mode; "" is ask.
	Mode events.ApprovalMode
	// ConfinedCommands is true when the run's sandbox keeps a command's
	// effects inside the workspace and the run's own directories: safety
	// mode read-only or workspace-write with the network off.
	ConfinedCommands bool
	// MCPTools maps the name the run offers each MCP tool under to the
	// tool's own name on its server: a rule naming a server's tool by its
	// own name applies even when the offered name differs (characters model
	// providers refuse, a long name: mcp.ModelName).
	MCPTools map[string]string
}

// Decide evaluates a call of tool (EvaluateIn, in run.Dir) and applies the
// run's approval mode to a decision that requires approval:
//   - ask: it stands; the call waits for a person (unless a grant covers it).
//   - auto: the call runs without asking when its effects stay in the
//     workspace (StaysInWorkspace); any other call still asks.
//   - bypass: the call runs without asking.
//
// A denial always stands, whatever the mode.
func (p *Policy) Decide(run Run, tool string, arguments json.RawMessage) Decision {
	d := p.evaluate(run.Dir, tool, run.MCPTools[tool], arguments)
	if d.Action != RequireApproval {
		return d
	}
	switch {
	case run.Mode == events.ApprovalBypass:
		d.Action, d.Reason = Allow, "approval mode bypass: "+d.Reason
	case run.Mode == events.ApprovalAuto && run.StaysInWorkspace(tool, arguments):
		d.Action, d.Reason = Allow, "approval mode auto, the call stays in the workspace: "+d.Reason
	}
	return d
}

// StaysInWorkspace reports whether a call's effects stay in the workspace,
// as approval mode auto takes it: a file tool (read_file, read_file_part,
// write_file, list_files) whose path, resolved in run.Dir, lies in
// /workspace; or a command (shell) when run.ConfinedCommands, whose sandbox
// then lets it change nothing but the workspace and the run's own
// directories and reach no network. Any other tool, and a call whose
// arguments are not a JSON object, does not.
func (run Run) StaysInWorkspace(tool string, arguments json.RawMessage) bool {
	if commandTools[tool] {
		return run.ConfinedCommands
	}
	if !pathTools[tool] {
		return false
	}
	dir := run.Dir
	if dir == "" {
		dir = workspaceDir
	}
	a := &args{raw: arguments, dir: dir}
	p, ok := a.value(pathArgument)
	if !ok {
		p = "." // list_files without a path lists the working directory
		if tool != "list_files" {
			return false
		}
	}
	resolved := resolvePath(dir, p)
	return resolved == workspaceDir || strings.HasPrefix(resolved, workspaceDir+"/")
}
