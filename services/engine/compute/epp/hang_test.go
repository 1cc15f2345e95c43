package epp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
)

// The host is bounded whatever the plugin does: these plugins stop reading
// their input or leave their process group, and every call, Close and New
// still return (within a bound far above what they take on a loaded
// machine), and the plugin's processes end.

// hangBound bounds waiting for a call that must return: without the host's
// bounds it would never return.
const hangBound = 60 * time.Second

// returns waits for done (fails the test once hangBound passed) and returns
// what it carried.
func returns[T any](t *testing.T, what string, done <-chan T) T {
	t.Helper()
	select {
	case v := <-done:
		return v
	case <-time.After(hangBound):
		t.Fatalf("%s did not return within %v", what, hangBound)
	}
	panic("unreachable")
}

// deafSandbox opens a sandbox of a plugin that stops reading its stdin at
// its first exec.run, and makes it stop.
func deafSandbox(t *testing.T, cfg epp.Config) compute.Sandbox {
	t.Helper()
	sb := openRetrying(t, newReference(t, cfg), spec)
	go func() { _, _ = sb.Exec(t.Context(), compute.ExecRequest{Command: "true"}) }()
	eventually.Holds(t, 30*time.Second, "the plugin got exec.run", func() bool { return count(calls(t, cfg), "exec.run") == 1 })
	return sb
}

// TestPluginThatStopsReadingCannotHangTheHost: a write to a plugin that
// takes no input ends when its call's context ends; the handle's Close
// returns and the plugin is gone.
func TestPluginThatStopsReadingCannotHangTheHost(t *testing.T) {
	t.Parallel()
	marker := newMarker()
	tr := &tracer{}
	cfg := helperConfig(t, "deaf", marker)
	cfg.Trace = tr.trace
	sb := deafSandbox(t, cfg)
	ctx, cancel := context.WithCancel(t.Context())
	wrote := make(chan error, 1)
	go func() { wrote <- sb.WriteFile(ctx, "big", make([]byte, 4<<20)) }()
	eventually.Holds(t, 30*time.Second, "files.write on its way", func() bool { return len(tr.sentOf("files.write")) == 1 })
	cancel()
	if err := returns(t, "WriteFile after its context ended", wrote); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteFile: %v, want context.Canceled", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- sb.Close() }()
	returns(t, "Close", closed)
	waitGone(t, marker)
}

// TestCancelMidWriteKeepsTheSandbox: a call given up while its request is
// half written (the plugin reads slowly) returns at once; the host writes
// the rest, then $/cancel, and the plugin — alive, its input still framed —
// serves the next call.
func TestCancelMidWriteKeepsTheSandbox(t *testing.T) {
	t.Parallel()
	tr := &tracer{}
	cfg := helperConfig(t, "pause", "")
	cfg.Trace = tr.trace
	sb := open(t, newReference(t, cfg), spec)
	ran := make(chan error, 1)
	go func() {
		_, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"})
		ran <- err
	}()
	eventually.Holds(t, 30*time.Second, "the plugin paused", func() bool { return count(calls(t, cfg), "exec.run") == 1 })
	ctx, cancel := context.WithCancel(t.Context())
	wrote := make(chan error, 1)
	go func() { wrote <- sb.WriteFile(ctx, "big", make([]byte, 4<<20)) }()
	eventually.Holds(t, 30*time.Second, "files.write on its way", func() bool { return len(tr.sentOf("files.write")) == 1 })
	cancel()
	if err := returns(t, "WriteFile after its context ended", wrote); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteFile: %v, want context.Canceled", err)
	}
	if err := os.WriteFile(filepath.Join(cfg.DataDir, "resume"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := returns(t, "the paused Exec", ran); err != nil {
		t.Fatalf("the paused Exec: %v", err)
	}
	if _, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"}); err != nil {
		t.Errorf("Exec after a cancelled write: %v, want the plugin alive", err)
	}
}

// TestPluginThatStopsReadingIsKilledAfterTheCallTimeout: a write the plugin
// does not take within the call timeout fails the call; the plugin is
// killed as hung.
func TestPluginThatStopsReadingIsKilledAfterTheCallTimeout(t *testing.T) {
	t.Parallel()
	marker := newMarker()
	cfg := helperConfig(t, "deaf", marker)
	cfg.CallTimeout = time.Second
	sb := deafSandbox(t, cfg)
	wrote := make(chan error, 1)
	go func() { wrote <- sb.WriteFile(t.Context(), "big", make([]byte, 4<<20)) }()
	err := returns(t, "WriteFile to a plugin that reads nothing", wrote)
	if !errors.Is(err, epp.ErrTimeout) || !errors.Is(err, compute.ErrSandboxLost) {
		t.Errorf("WriteFile: %v, want ErrTimeout and ErrSandboxLost (the plugin killed)", err)
	}
	waitGone(t, marker)
}

// TestPluginThatLeavesItsGroupIsStillKilled: a plugin that moves itself out
// of its process group, and ignores SIGTERM and the end of its input, is
// still killed at the end of its session.
func TestPluginThatLeavesItsGroupIsStillKilled(t *testing.T) {
	t.Parallel()
	marker := newMarker()
	started := make(chan error, 1)
	go func() {
		_, err := epp.New(t.Context(), helperConfig(t, "leavegroup,stubborn", marker))
		started <- err
	}()
	if err := returns(t, "New (its session's end)", started); err != nil {
		t.Fatal(err)
	}
	waitGone(t, marker)
}

// TestPluginEndsWhileItsOrphanWrites: a plugin that exits leaving a process
// of another group that holds its stdout and keeps writing still fails the
// call with its end, and the host stops reading from the orphan.
func TestPluginEndsWhileItsOrphanWrites(t *testing.T) {
	t.Parallel()
	marker := newMarker()
	sb := open(t, newReference(t, helperConfig(t, "daemon", marker)), spec)
	t.Cleanup(func() {
		for _, p := range computetest.Processes(marker) {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	})
	ran := make(chan error, 1)
	go func() {
		_, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"})
		ran <- err
	}()
	var ee *epp.ExitError
	if err := returns(t, "Exec on a plugin that exited", ran); !errors.As(err, &ee) || ee.Status != "exit status 3" {
		t.Errorf("Exec: %v, want the plugin's exit (status 3)", err)
	}
}

// openRetrying opens a sandbox of a provider whose call timeout is short:
// on a loaded machine an answer may come later than that, so an Open that
// timed out is tried again (each with a plugin process of its own).
func openRetrying(t *testing.T, p *epp.Provider, s compute.Spec) compute.Sandbox {
	t.Helper()
	var sb compute.Sandbox
	eventually.Succeeds(t, 2*time.Minute, "the sandbox open", func() (err error) {
		sb, err = p.Open(t.Context(), s)
		if err != nil && !errors.Is(err, epp.ErrTimeout) {
			t.Fatalf("Open: %v", err)
		}
		return err
	})
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}
