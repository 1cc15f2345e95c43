package contracttests

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// computeDestroyWhileRunning destroys a key while a command of an open
// handle runs: the command is killed, its Exec and every later call of the
// handle report compute.ErrSandboxLost (the engine fails the run with
// sandbox_error on it), and the key's next Open gets a fresh, working
// sandbox.
func computeDestroyWhileRunning(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	c := startLostCase(t, p, "lost", 2)
	if err := p.Destroy(ctx, c.key); err != nil {
		t.Fatal(err)
	}
	if _, err := c.sb.Exec(ctx, compute.ExecRequest{Command: "true"}); !errors.Is(err, compute.ErrSandboxLost) {
		t.Errorf("Exec on the destroyed handle: %v, want ErrSandboxLost", err)
	}
	if _, _, err := c.sb.ReadFile(ctx, "kept.txt", 0); !errors.Is(err, compute.ErrSandboxLost) {
		t.Errorf("ReadFile on the destroyed handle: %v, want ErrSandboxLost", err)
	}
	c.wantLost(t, p, killWithin)
}

// ComputeSandboxDeleted is the case of a sandbox deleted from outside
// while a command of it runs, for a provider that keeps a key's sandbox in
// a host directory (hostDir names it): the directory is removed and the
// command's processes killed, as an operator or a cleaner would, as soon as
// the command's first process exists (so also while the provider is still
// setting it up). The Exec reports compute.ErrSandboxLost, and so does every
// later call of the handle; the key's next Open gets a fresh, working
// sandbox.
func ComputeSandboxDeleted(t *testing.T, p compute.Provider, hostDir func(compute.Key) string) {
	for range 5 {
		sandboxDeleted(t, p, hostDir)
	}
}

func sandboxDeleted(t *testing.T, p compute.Provider, hostDir func(compute.Key) string) {
	c := startLostCase(t, p, "deleted", 1)
	if err := os.RemoveAll(hostDir(c.key)); err != nil {
		t.Fatal(err)
	}
	for _, proc := range computetest.Processes(c.marker) {
		_ = syscall.Kill(proc.PID, syscall.SIGKILL)
	}
	if err := c.sb.WriteFile(testCtx(t), "again.txt", []byte("x")); !errors.Is(err, compute.ErrSandboxLost) {
		t.Errorf("WriteFile on the deleted sandbox: %v, want ErrSandboxLost", err)
	}
	c.wantLost(t, p, 30*time.Second)
}

// lostCase is a sandbox whose command runs until something outside kills
// it: the handle, its key, the command's marker and its Exec's error.
type lostCase struct {
	sb     compute.Sandbox
	key    compute.Key
	marker string
	done   chan error
}

// startLostCase opens a sandbox of a new key, writes kept.txt and starts a
// command of two sleeps, waiting until at least procs of its processes exist.
func startLostCase(t *testing.T, p compute.Provider, prefix string, procs int) lostCase {
	t.Helper()
	c := lostCase{key: newKey(prefix), marker: newMarker(), done: make(chan error, 1)}
	c.sb = openSandbox(t, p, c.key, "s", "r")
	mustWrite(t, c.sb, "kept.txt", "x")
	go func() {
		_, err := c.sb.Exec(testCtx(t), compute.ExecRequest{Command: "sleep " + c.marker + " & sleep " + c.marker})
		c.done <- err
	}()
	waitFor(t, 30*time.Second, "the command's processes", func() bool { return len(computetest.Processes(c.marker)) >= procs })
	return c
}

// wantLost fails unless the Exec ends within total with ErrSandboxLost and
// leaves no process, and the key's next Open gets a fresh, working sandbox.
func (c lostCase) wantLost(t *testing.T, p compute.Provider, total time.Duration) {
	t.Helper()
	select {
	case err := <-c.done:
		if !errors.Is(err, compute.ErrSandboxLost) {
			t.Errorf("Exec whose sandbox was lost: %v, want ErrSandboxLost", err)
		}
	case <-time.After(total):
		t.Fatalf("Exec still running %v after its sandbox was lost", total)
	}
	waitGone(t, c.marker, total)
	fresh := openSandbox(t, p, c.key, "s", "r2")
	if out := mustExec(t, fresh, compute.ExecRequest{Command: "test -e kept.txt && echo old || echo fresh"}); out != "fresh\n" {
		t.Errorf("the key's next sandbox: %q, want a fresh one", out)
	}
}
