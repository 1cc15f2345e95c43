package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/executor"
)

// SkillResolver finds a profile's skills in the skill store
// (skills.Store): the newest stored version in a range, checks a version's
// files against its digest, and tells where they are on this host.
type SkillResolver interface {
	Resolve(ref profile.SkillRef) (profile.SkillVersion, error)
	Verify(v profile.SkillVersion) error
	Path(v profile.SkillVersion) string
}

// maxMCPSnapshotBytes bounds what all of a run's MCP servers put into its
// snapshot: the snapshot is one event, one Kafka record (1 MB by default),
// and the profile, built-in tools and grants need room too.
const maxMCPSnapshotBytes = 512 << 10

// StartsRun implements executor.Starter: a run of a profile with MCP
// servers or skills is started by Execute, which lists the servers' tools
// and resolves the skills' versions into its snapshot first.
func (e *Engine) StartsRun(p profile.Profile) bool { return p.ResolvesAtStart() }

// start starts a run the executor left to the engine (executor.Starter):
// its snapshot is completed by resolve. started is false when the run did
// not start or failed at its start.
func (r *execution) start(ctx context.Context) (started bool, err error) {
	p, ok, err := r.run.Start(ctx, r.resolve)
	if err != nil || !ok {
		if errors.Is(err, executor.ErrRunEnded) {
			return false, nil // cancelled while its capabilities were resolved
		}
		return false, err
	}
	r.p, r.limits, r.ctxCfg = p, p.Limits.WithDefaults(), p.Context.WithDefaults()
	return true, r.attachStarted(ctx)
}

// resolve completes the run's snapshot with its skills' versions and its
// MCP servers' tools, as they are now. The connections it makes stay open
// for the execution's calls.
func (r *execution) resolve(ctx context.Context, snap profile.Snapshot) (profile.Snapshot, error) {
	r.p, r.opts, r.ctxCfg = snap.Profile, snap.Options, snap.Profile.Context.WithDefaults()
	var err error
	if snap.Skills, err = r.resolveSkills(snap.Profile.Skills); err != nil {
		return snap, err
	}
	r.skills = snap.Skills
	if snap.MCPServers, err = r.listServers(ctx, snap.Profile.MCPServers); err != nil {
		return snap, err
	}
	if raw, _ := json.Marshal(snap.MCPServers); len(raw) > maxMCPSnapshotBytes {
		return snap, fmt.Errorf("the agent's MCP servers list %d bytes of tools; at most %d fit a run's snapshot", len(raw), maxMCPSnapshotBytes)
	}
	specs, err := mcpSpecs(snap.MCPServers)
	if err != nil {
		return snap, err
	}
	for _, s := range specs {
		if slices.ContainsFunc(snap.Tools, func(t model.ToolSpec) bool { return t.Name == s.Name }) {
			return snap, fmt.Errorf("MCP tool %s has the name of another tool of the agent", s.Name)
		}
	}
	snap.Tools = append(snap.Tools, specs...)
	return snap, r.buildMCPTools(snap.MCPServers)
}

func (r *execution) resolveSkills(refs []profile.SkillRef) ([]profile.SkillVersion, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	if r.e.cfg.Skills == nil {
		return nil, errors.New("the agent lists skills, and this executor has no skill store (skills_dir)")
	}
	out := make([]profile.SkillVersion, 0, len(refs))
	for _, ref := range refs {
		v, err := r.e.cfg.Skills.Resolve(ref)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// listServers lists every server's tools at once. An optional server that
// fails is recorded as skipped; any other failure fails the run's start.
func (r *execution) listServers(ctx context.Context, servers []profile.MCPServer) ([]profile.MCPServerSnapshot, error) {
	if len(servers) == 0 {
		return nil, nil
	}
	set := r.mcpSet()
	out := make([]profile.MCPServerSnapshot, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap, err := mcp.List(ctx, set, srv)
			if err == nil {
				err = checkSchemas(srv, snap)
			}
			if err != nil && srv.Optional {
				snap = profile.MCPServerSnapshot{Name: srv.Name, Transport: srv.TransportOrDefault(), Tools: []profile.MCPTool{},
					Skipped: set.Secrets().Scrub(err.Error())}
				err = nil
			}
			out[i], errs[i] = snap, err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.New(set.Secrets().Scrub(err.Error()))
	}
	return out, nil
}

// checkSchemas refuses a server whose tools' input schemas the runtime
// cannot validate arguments with.
func checkSchemas(srv profile.MCPServer, snap profile.MCPServerSnapshot) error {
	ts := make([]tools.Tool, 0, len(snap.Tools))
	for _, t := range snap.Tools {
		ts = append(ts, mcp.NewTool(nil, srv, t, 0))
	}
	if _, err := tools.NewRegistry(ts...); err != nil {
		return fmt.Errorf("MCP server %s: %w", srv.Name, err)
	}
	return nil
}

// mcpSpecs are the specs the model is offered for the servers' tools.
func mcpSpecs(servers []profile.MCPServerSnapshot) ([]model.ToolSpec, error) {
	var out []model.ToolSpec
	seen := map[string]bool{}
	for _, s := range servers {
		for _, t := range s.Tools {
			if seen[t.Name] {
				return nil, fmt.Errorf("two MCP tools are named %s", t.Name)
			}
			seen[t.Name] = true
			out = append(out, t.Spec())
		}
	}
	return out, nil
}

// mcpSet is the execution's connections to its run's servers.
func (r *execution) mcpSet() *mcp.Set {
	r.mcpMu.Lock()
	defer r.mcpMu.Unlock()
	if r.mcp == nil {
		r.mcp = mcp.NewSet(r.p.MCPServers, mcp.Env{Sandbox: r.openSandbox, Secrets: r.e.cfg.MCPSecrets,
			Log: r.log, ClientVersion: r.e.cfg.Version})
	}
	return r.mcp
}

func (r *execution) closeMCP() {
	r.mcpMu.Lock()
	set := r.mcp
	r.mcpMu.Unlock()
	if set != nil {
		set.Close()
	}
}

// buildMCPTools makes the run's MCP tools callable: a registry of them
// validates a call's arguments against the schema the snapshot froze.
func (r *execution) buildMCPTools(servers []profile.MCPServerSnapshot) error {
	var ts []tools.Tool
	byName := map[string]profile.MCPServer{}
	for _, s := range r.p.MCPServers {
		byName[s.Name] = s
	}
	r.mcpNames = map[string]string{}
	for _, s := range servers {
		for _, t := range s.Tools {
			ts = append(ts, mcp.NewTool(r.mcpSet(), byName[s.Name], t, r.ctxCfg.OffloadBytes))
			r.mcpNames[t.Name] = t.Tool
		}
	}
	if len(ts) == 0 {
		return nil
	}
	reg, err := tools.NewRegistry(ts...)
	if err != nil {
		return fmt.Errorf("MCP tools: %w", err)
	}
	r.mcpTools = reg
	return nil
}

// lookup returns the tool the run offers as name: a built-in the profile
// lists, or one of its MCP servers' tools.
func (r *execution) lookup(name string) (tools.Tool, bool) {
	if slices.Contains(r.p.Tools, name) {
		return r.e.cfg.Tools.Get(name)
	}
	if r.mcpTools != nil {
		return r.mcpTools.Get(name)
	}
	return nil, false
}

// offered lists the names of the tools the run offers.
func (r *execution) offered() []string {
	names := slices.Clone(r.p.Tools)
	if r.mcpTools != nil {
		names = append(names, r.mcpTools.Names()...)
	}
	return names
}

// readOnlyMounts are the host directories the run's sandbox sees
// read-only: its profile's mounts and its skills' versions. Each time a
// sandbox is opened — after a pause or a takeover too, maybe on another
// host — each version's files are checked against the digest its snapshot
// froze: a run never sees other content under its versions, and never runs
// without a skill its model is told about.
func (r *execution) readOnlyMounts() ([]compute.ReadOnlyMount, error) {
	out := slices.Clone(r.p.Sandbox.Mounts)
	if len(r.skills) > 0 && r.e.cfg.Skills == nil {
		return nil, errors.New("the run's skills need a skill store, and this executor has none (skills_dir)")
	}
	for _, v := range r.skills {
		if err := r.e.cfg.Skills.Verify(v); err != nil {
			return nil, err
		}
		out = append(out, compute.ReadOnlyMount{Source: r.e.cfg.Skills.Path(v), Target: v.Path()})
	}
	return out, nil
}

// withSkills adds to a system prompt what the model needs to know of the
// run's skills: each one's name, description and where its instructions are.
func withSkills(prompt string, skills []profile.SkillVersion) string {
	if len(skills) == 0 {
		return prompt
	}
	var b strings.Builder
	b.WriteString(prompt)
	if prompt != "" {
		b.WriteString("\n\n")
	}
	b.WriteString("Skills are available to you: folders of instructions, scripts and resources, read-only in your " +
		"sandbox. When a task matches a skill's description, first read its SKILL.md and follow it.\n")
	for _, v := range skills {
		fmt.Fprintf(&b, "- %s (version %s, %s/SKILL.md): %s\n", v.Name, v.Version, v.Path(), v.Description)
	}
	return strings.TrimRight(b.String(), "\n")
}
