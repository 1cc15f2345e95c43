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
	key := newKey("lost")
	sb := openSandbox(t, p, key, "s", "r")
	mustWrite(t, sb, "kept.txt", "x")
	marker := newMarker()
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(ctx, compute.ExecRequest{Command: "sleep " + marker + " & sleep " + marker})
		done <- err
	}()
	waitFor(t, 30*time.Second, "the command", func() bool { return len(computetest.Processes(marker)) >= 2 })
	if err := p.Destroy(ctx, key); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, compute.ErrSandboxLost) {
			t.Errorf("Exec whose sandbox was destroyed: %v, want ErrSandboxLost", err)
		}
	case <-time.After(killWithin):
		t.Fatalf("Exec still running %v after Destroy", killWithin)
	}
	waitGone(t, marker, killWithin)
	if _, err := sb.Exec(ctx, compute.ExecRequest{Command: "true"}); !errors.Is(err, compute.ErrSandboxLost) {
		t.Errorf("Exec on the destroyed handle: %v, want ErrSandboxLost", err)
	}
	if _, _, err := sb.ReadFile(ctx, "kept.txt", 0); !errors.Is(err, compute.ErrSandboxLost) {
		t.Errorf("ReadFile on the destroyed handle: %v, want ErrSandboxLost", err)
	}
	fresh := openSandbox(t, p, key, "s", "r2")
	if out := mustExec(t, fresh, compute.ExecRequest{Command: "test -e kept.txt && echo old || echo fresh"}); out != "fresh\n" {
		t.Errorf("the key's next sandbox: %q, want a fresh one", out)
	}
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
	ctx := testCtx(t)
	key := newKey("deleted")
	sb := openSandbox(t, p, key, "s", "r")
	mustWrite(t, sb, "kept.txt", "x")
	marker := newMarker()
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(ctx, compute.ExecRequest{Command: "sleep " + marker + " & sleep " + marker})
		done <- err
	}()
	waitFor(t, 30*time.Second, "the command's first process", func() bool { return len(computetest.Processes(marker)) > 0 })
	if err := os.RemoveAll(hostDir(key)); err != nil {
		t.Fatal(err)
	}
	for _, proc := range computetest.Processes(marker) {
		_ = syscall.Kill(proc.PID, syscall.SIGKILL)
	}
	select {
	case err := <-done:
		if !errors.Is(err, compute.ErrSandboxLost) {
			t.Errorf("Exec whose sandbox was deleted: %v, want ErrSandboxLost", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Exec still running after its sandbox was deleted and its processes killed")
	}
	waitGone(t, marker, 30*time.Second)
	if err := sb.WriteFile(ctx, "again.txt", []byte("x")); !errors.Is(err, compute.ErrSandboxLost) {
		t.Errorf("WriteFile on the deleted sandbox: %v, want ErrSandboxLost", err)
	}
	fresh := openSandbox(t, p, key, "s", "r2")
	if out := mustExec(t, fresh, compute.ExecRequest{Command: "test -e kept.txt && echo old || echo fresh"}); out != "fresh\n" {
		t.Errorf("the key's next sandbox: %q, want a fresh one", out)
	}
}
