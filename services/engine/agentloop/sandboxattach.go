package agentloop

import (
	"context"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/executor"
)

// A provider that keeps sandboxes under ids of its own (a provider plugin)
// gives the run's handle an id; the run records it
// (runtime.sandbox.attached, committed before the tool that opened the
// sandbox runs), and whoever continues the run — this executor on its next
// Execute, a new owner after a takeover — reconnects to exactly that
// sandbox (compute.Spec.SandboxID). When it is gone the provider answers
// compute.ErrSandboxLost and the run fails with sandbox_error
// (sandboxlost.go); the session's next run opens a fresh sandbox.
//
// A sandbox opened while the run starts — its stdio MCP servers are listed
// before runtime.run.started, which the log accepts no other event before —
// is recorded right after the start is appended (attachStarted). An executor
// that dies in between leaves that sandbox unrecorded: the next owner opens
// another, as for a run that never recorded one.

// recordedSandbox is the id of the sandbox the run attached to before, ""
// for none. A sandbox another provider keeps than this executor's is out
// of reach: lost.
func (r *execution) recordedSandbox(st events.RunState) (string, error) {
	if st.Sandbox == nil {
		return "", nil
	}
	if name := r.e.cfg.Compute.Name(); st.Sandbox.Provider != name {
		return "", fmt.Errorf("the run's sandbox %s is kept by compute provider %s, and this executor runs %s: %w",
			st.Sandbox.SandboxID, st.Sandbox.Provider, name, compute.ErrSandboxLost)
	}
	return st.Sandbox.SandboxID, nil
}

// attach records the id of the sandbox sb is a handle on, unless it has
// none, the run recorded it already, or the run has not started yet
// (attachStarted records it then); the append waits for its commit.
func (r *execution) attach(ctx context.Context, st events.RunState, sb compute.Sandbox) error {
	id := compute.SandboxIDOf(sb)
	if id == "" || (st.Sandbox != nil && st.Sandbox.SandboxID == id) || st.Status == events.StatusQueued {
		return nil
	}
	_, err := r.run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.SandboxAttached,
		Payload: events.SandboxAttachedPayload{Provider: r.e.cfg.Compute.Name(), SandboxID: id}})
	if err != nil {
		return fmt.Errorf("record the run's sandbox %s: %w", id, err)
	}
	return nil
}

// attachStarted records the sandbox the run's start opened (for its stdio
// MCP servers), now that the run has started.
func (r *execution) attachStarted(ctx context.Context) error {
	r.sbMu.Lock()
	defer r.sbMu.Unlock()
	if r.sandbox == nil {
		return nil
	}
	return r.attach(ctx, r.run.State(), r.sandbox)
}
