// Package agentloop is the agent loop engine: a run
// calls a model, the model calls tools that execute in a sandbox, results go
// back to the model, until the model answers without calling a tool. Outside
// intents take effect only at the five safe points, through executor.Run.
//
// The engine keeps no state of its own between stages: each iteration derives
// the next stage from the run's committed events (see progress). A new owner
// after a crash therefore continues exactly where the log ends: a model call
// that never completed is repeated, a tool call that never completed was
// closed as runtime_lost by the executor and is reported so to the model, and
// a tool call that never started is started now. No tool call can start
// twice: its item id is derived from the response and the call id, and the
// state machine refuses a second start.
package agentloop

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/metrics"
	"github.com/xbot-runtime/xbot/infra/tracing"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/executor"
)

// ModelResolver returns the provider and model name an agent profile uses.
type ModelResolver func(p profile.Profile) (model.Provider, string, error)

// Config configures an Engine.
type Config struct {
	// Models resolves a profile's model. Required.
	Models ModelResolver
	// Tools is the registry profiles pick their tools from. Required.
	Tools *tools.Registry
	// Compute provides sandboxes for tool calls. Required when a profile has
	// tools that need one.
	Compute compute.Provider
	// MCPSecrets fill the header templates of profiles' remote MCP servers
	// (mcp_secrets); nil holds none.
	MCPSecrets *mcp.Secrets
	// Skills finds profiles' skills; nil: a profile with skills cannot start.
	Skills SkillResolver
	// Version is reported to MCP servers as the client's version.
	Version string
	// Log is the engine's logger. Required.
	Log *zap.Logger
	// FlushInterval and FlushBytes coalesce streamed text into item deltas:
	// an item's first text is appended at once, later text when this much
	// time passed since the last delta or this many bytes are buffered.
	// Defaults 50ms and 256.
	FlushInterval time.Duration
	FlushBytes    int
}

// Engine implements executor.Engine.
type Engine struct {
	cfg Config

	mu sync.Mutex
	// policies caches compiled policies by capability snapshot hash: runs of
	// one profile share a snapshot's rules, and compiling them (regexps) on
	// every resume is a measurable cost.
	policies map[string]*policy.Policy
	// snapshots keeps the capability snapshots decoded, which a run reads
	// when its execution starts.
	snapshots profile.SnapshotCache
}

// maxCachedPolicies bounds the policy cache; it is emptied when full.
const maxCachedPolicies = 256

// compiledPolicy compiles c, or returns the policy compiled for the same
// snapshot before.
func (e *Engine) compiledPolicy(snapshotHash string, c policy.Config) (*policy.Policy, error) {
	if snapshotHash == "" {
		return policy.Compile(c)
	}
	e.mu.Lock()
	p, ok := e.policies[snapshotHash]
	e.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := policy.Compile(c)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.policies) >= maxCachedPolicies {
		e.policies = nil
	}
	if e.policies == nil {
		e.policies = map[string]*policy.Policy{}
	}
	e.policies[snapshotHash] = p
	return p, nil
}

// New returns an engine. Missing required dependencies are wiring bugs.
func New(cfg Config) *Engine {
	if cfg.Models == nil || cfg.Tools == nil || cfg.Log == nil {
		panic("agentloop.New: Models, Tools and Log are required")
	}
	if cfg.FlushInterval == 0 {
		cfg.FlushInterval = 50 * time.Millisecond
	}
	if cfg.FlushBytes == 0 {
		cfg.FlushBytes = 256
	}
	return &Engine{cfg: cfg}
}

// Implements implements executor.Engine: the commands and intents the
// engine honours.
func (e *Engine) Implements(what string) bool {
	switch what {
	case string(commands.AppendUserInput) + "/" + commands.IntentSteer,
		string(commands.AppendUserInput) + "/" + commands.IntentClarification,
		string(commands.AppendUserInput) + "/" + commands.IntentFollowUp,
		string(commands.SubmitApprovalDecision),
		string(commands.RequestCompaction):
		return true
	}
	return false
}

// readFilePart is the tool that reads offloaded outputs.
const readFilePart = tools.ReadFilePartName

// Snapshot implements executor.Engine: the profile, the specs of the
// tools it offers and the grants it inherits. A profile with tools (or MCP
// servers) also gets read_file_part, so the model can read outputs too
// large for its context.
func (e *Engine) Snapshot(p profile.Profile, grants []events.PermissionGrant) (profile.Snapshot, error) {
	if (len(p.Tools) > 0 || len(p.MCPServers) > 0) && !slices.Contains(p.Tools, readFilePart) {
		if _, ok := e.cfg.Tools.Get(readFilePart); ok {
			p.Tools = append(slices.Clone(p.Tools), readFilePart)
		}
	}
	specs, err := e.cfg.Tools.Specs(p.Tools)
	if err != nil {
		return profile.Snapshot{}, err
	}
	return profile.NewSnapshot(p, specs, grants)
}

// errStop ends the loop without an error: the run ended or paused.
var errStop = errors.New("stop")

// execution drives one run for one Execute call.
type execution struct {
	e       *Engine
	run     *executor.Run
	p       profile.Profile
	limits  profile.Limits
	log     *zap.Logger
	session [][]events.Envelope
	loaded  bool
	memo    memo // touched by the loop's goroutine only
	// specs are the tools offered, from the capability snapshot.
	specs []model.ToolSpec
	// opts are the run's effective options, from the capability snapshot.
	opts    events.RunOptions
	policy  *policy.Policy
	ctxCfg  profile.Context
	sbMu    sync.Mutex // tool calls run concurrently; the first opens the sandbox
	sandbox compute.Sandbox
	lost    string // the first sandbox_error a call met (sandboxlost.go); under sbMu
	// skills are the run's skill versions, from its snapshot.
	skills []profile.SkillVersion
	// mcp connects to the run's MCP servers (made on first use); mcpTools
	// are their tools as the snapshot froze them (nil: none).
	mcpMu    sync.Mutex
	mcp      *mcp.Set
	mcpTools *tools.Registry
	mcpNames map[string]string // offered name → the tool's own name, for the policy
	// wall ends at the run's wall-time budget.
	wall context.Context
}

// Execute implements executor.Engine.
func (e *Engine) Execute(ctx context.Context, run *executor.Run, p profile.Profile) error {
	ctx, span := tracing.StartRun(ctx, run.ID())
	defer span.End()
	r := &execution{e: e, run: run, p: p, limits: p.Limits.WithDefaults(), ctxCfg: p.Context.WithDefaults(),
		log: e.cfg.Log.With(zap.String("run_id", run.ID()))}
	defer r.closeSandbox()
	defer r.closeMCP() // before the sandbox, where stdio servers run
	if st := run.State(); st.Status == events.StatusQueued && !st.Requeued {
		started, err := r.start(ctx)
		if err != nil || !started {
			return err
		}
	}
	if err := r.loadSnapshot(); err != nil {
		return err
	}
	if run.Waiting() { // paused, or queued after a resume and now given its sandbox key
		if stop, err := run.SafePoint(ctx, executor.BeforeModelRequest, executor.SafePointOptions{}); err != nil || stop {
			return err
		}
		resumed, err := run.Resume(ctx, r.answer)
		if err != nil || !resumed {
			return err
		}
	}
	// The wall-time budget counts time spent running: pauses (waiting for a
	// person) are not the run's work.
	pr := analyze(run.Events())
	wall, cancel := context.WithDeadline(ctx, time.UnixMilli(pr.startedAt+pr.pausedMs).Add(r.limits.MaxWallTime))
	defer cancel()
	r.wall = wall
	err := r.loop(ctx)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// loadSnapshot takes the tool specs and the policy from the run's capability
// snapshot; a run that started before snapshots existed resolves them now.
func (r *execution) loadSnapshot() error {
	snap, err := r.e.snapshots.Of(r.run.Events())
	switch {
	case err == nil:
		r.specs, r.opts = snap.Tools, snap.RunOptions()
	case errors.Is(err, profile.ErrNoSnapshot):
		if r.specs, err = r.e.cfg.Tools.Specs(r.p.Tools); err != nil {
			return err
		}
		r.opts, _ = r.p.EffectiveOptions(nil) // asking for nothing is always allowed
	default:
		return err
	}
	r.policy, err = r.e.compiledPolicy(r.run.State().SnapshotHash, r.p.Policy)
	if err != nil {
		return err
	}
	r.skills = snap.Skills
	r.p.SystemPrompt = withSkills(r.p.SystemPrompt, snap.Skills)
	if r.mcpTools == nil {
		return r.buildMCPTools(snap.MCPServers)
	}
	return nil
}

func (r *execution) loop(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		st := r.run.State()
		if st.Status != events.StatusRunning {
			return errStop
		}
		if msg := r.overBudget(); msg != "" {
			return r.budget(ctx, msg)
		}
		pr := r.progress()
		var err error
		switch {
		case len(pr.unstarted) > 0 || len(r.approved(st)) > 0:
			err = r.toolStage(ctx, pr)
		case pr.final() && !commands.HasPending(st, commands.AppendUserInput):
			err = r.finish(ctx, pr.last.text)
		default:
			err = r.modelStage(ctx)
		}
		if err != nil {
			return err
		}
	}
}

// finish is the before_run_terminal safe point and the completion. A command
// that arrives at the last moment makes the completion fail with
// ErrPendingCommands; the loop then honours it (a steer means another model
// call), so nothing is dropped.
func (r *execution) finish(ctx context.Context, output string) error {
	ctx, end := stage(ctx, metrics.StageFinish)
	defer end()
	if stop, err := r.run.SafePoint(ctx, executor.BeforeRunTerminal, executor.SafePointOptions{}); err != nil || stop {
		return stopOr(err)
	}
	_, err := r.run.Append(ctx, executor.AppendOptions{IfNoPending: true},
		events.Draft{Type: events.RunCompleted, Payload: events.RunCompletedPayload{Output: output}})
	if errors.Is(err, executor.ErrPendingCommands) {
		return nil
	}
	if err != nil {
		return err
	}
	return errStop
}

// budget fails the run with budget_exhausted.
func (r *execution) budget(ctx context.Context, msg string) error {
	r.log.Info("budget exhausted", zap.String("reason", msg))
	if err := r.run.Fail(ctx, events.FailBudgetExhausted, msg); err != nil {
		return err
	}
	return errStop
}

// stopOr maps "the safe point ended the run" to errStop.
func stopOr(err error) error {
	if err != nil {
		return err
	}
	return errStop
}

func (r *execution) sessionHistory(ctx context.Context) ([][]events.Envelope, error) {
	if r.loaded || r.run.State().ParentRunID == "" {
		return r.session, nil
	}
	h, err := r.run.SessionHistory(ctx)
	if errors.Is(err, executor.ErrForeignParent) {
		return nil, r.fail(ctx, events.FailInternal, "the run's parent belongs to another tenant; its history is not used")
	}
	if errors.Is(err, executor.ErrHistoryGone) {
		// Going on without the earlier turns would answer a different conversation.
		return nil, r.fail(ctx, events.FailHistoryUnavailable, err.Error())
	}
	if err != nil {
		return nil, err
	}
	r.session, r.loaded = h, true
	return h, nil
}

func (r *execution) openSandbox(ctx context.Context) (compute.Sandbox, error) {
	r.sbMu.Lock()
	defer r.sbMu.Unlock()
	if r.sandbox != nil {
		return r.sandbox, nil
	}
	if r.e.cfg.Compute == nil {
		return nil, errors.New("no compute provider is configured")
	}
	st := r.run.State()
	recorded, err := r.recordedSandbox(st)
	if err != nil {
		return nil, err
	}
	mounts, err := r.readOnlyMounts()
	if err != nil {
		return nil, err
	}
	sb, err := r.e.cfg.Compute.Open(ctx, compute.Spec{
		Key: compute.Key{TenantID: st.SandboxKey.TenantID, WorkspaceID: st.SandboxKey.WorkspaceID,
			AgentID: st.SandboxKey.AgentID, OwnerID: st.SandboxKey.OwnerID},
		SessionID: st.PlatformSessionID, RunID: st.RunID,
		Network: r.network(), AllowHosts: r.p.Sandbox.AllowHosts, Env: r.p.Sandbox.Env,
		Limits: r.p.Sandbox.Limits(), SafetyMode: r.opts.SafetyMode, WorkingDirectory: r.opts.WorkingDirectory,
		SandboxID:      recorded,
		ReadOnlyMounts: mounts,
	})
	if err != nil {
		return nil, err
	}
	if err := r.attach(ctx, st, sb); err != nil {
		_ = sb.Close()
		return nil, err
	}
	r.sandbox = sb
	return sb, nil
}

func (r *execution) closeSandbox() {
	r.sbMu.Lock()
	defer r.sbMu.Unlock()
	if r.sandbox != nil {
		if err := r.sandbox.Close(); err != nil {
			r.log.Warn("closing the sandbox failed", zap.Error(err))
		}
	}
}
