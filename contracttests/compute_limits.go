package contracttests

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// limitCases are the resource-limit cases of ComputeProvider. A provider
// that reports a cgroup mechanism (Mechanism() "cgroup v1" or "cgroup v2")
// must name the memory and pids limits it enforced; with rlimits only the
// command must be contained.
func limitCases() []struct {
	name string
	fn   func(t *testing.T, p compute.Provider)
} {
	return []struct {
		name string
		fn   func(t *testing.T, p compute.Provider)
	}{
		{"LimitsInvalid", computeLimitsInvalid},
		{"LimitPidsForkBomb", computeLimitPids},
		{"LimitMemory", computeLimitMemory},
		{"LimitWorkspaceWrite", computeLimitWorkspaceWrite},
		{"LimitWorkspaceExec", computeLimitWorkspaceExec},
	}
}

// cgroupLimited reports whether p says it enforces limits with cgroups.
func cgroupLimited(p compute.Provider) bool {
	m, ok := p.(interface{ Mechanism() string })
	return ok && strings.HasPrefix(m.Mechanism(), "cgroup")
}

func openLimited(t *testing.T, p compute.Provider, l compute.Limits) compute.Sandbox {
	t.Helper()
	sb, err := p.Open(testCtx(t), compute.Spec{Key: newKey("limits"), SessionID: "s", RunID: "r", Limits: l})
	if err != nil {
		t.Fatalf("Open with limits %+v: %v", l, err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// limitHit checks err: a *compute.LimitError for resource and limit, or —
// when the provider does not use cgroups and strict is false — nil.
func limitHit(t *testing.T, p compute.Provider, err error, resource string, limit int64, strict bool) {
	t.Helper()
	var le *compute.LimitError
	if err == nil && !strict && !cgroupLimited(p) {
		return
	}
	if !errors.As(err, &le) || !errors.Is(err, compute.ErrLimit) || le.Resource != resource || le.Limit != limit {
		t.Fatalf("error = %v, want a LimitError for %s at %d", err, resource, limit)
	}
	if !strings.Contains(le.Error(), le.Mechanism) || le.Mechanism == "" {
		t.Errorf("%q does not name its mechanism", le.Error())
	}
}

func computeLimitsInvalid(t *testing.T, p compute.Provider) {
	for _, l := range []compute.Limits{{MemoryBytes: -1}, {Pids: 2}, {WorkspaceBytes: 10}, {CPUMillis: -5}} {
		sb, err := p.Open(testCtx(t), compute.Spec{Key: newKey("badlimits"), SessionID: "s", RunID: "r", Limits: l})
		if err == nil {
			_ = sb.Close()
			t.Errorf("Open with limits %+v succeeded", l)
		}
	}
}

// computeLimitPids: a fork bomb, bounded by its timeout, ends with the pids
// limit reached, leaves no process behind and the sandbox usable.
func computeLimitPids(t *testing.T, p compute.Provider) {
	const pids = 32
	sb := openLimited(t, p, compute.Limits{Pids: pids})
	marker := newMarker()
	start := time.Now()
	res, err := sb.Exec(testCtx(t), compute.ExecRequest{Timeout: 3 * time.Second,
		Command: "f(){ f & f & }; f; sleep " + marker})
	if took := time.Since(start); took > 3*time.Second+killWithin {
		t.Fatalf("the fork bomb's Exec returned after %v", took)
	}
	t.Logf("fork bomb: %+v, %v after %v", res, err, time.Since(start))
	limitHit(t, p, err, compute.ResourcePids, pids, false)
	waitGone(t, marker, killWithin)
	if out := mustExec(t, sb, compute.ExecRequest{Command: "echo alive"}); out != "alive\n" {
		t.Errorf("after the fork bomb: %q", out)
	}
}

// computeLimitMemory: a command that allocates past the memory limit does
// not succeed; with cgroups it is killed and the error names the limit.
func computeLimitMemory(t *testing.T, p compute.Provider) {
	const mem = 64 << 20
	sb := openLimited(t, p, compute.Limits{MemoryBytes: mem})
	// tail keeps a line that never ends in memory: 512 MiB of zero bytes.
	res, err := sb.Exec(testCtx(t), compute.ExecRequest{Timeout: time.Minute,
		Command: "head -c 536870912 /dev/zero | tail > /dev/null"})
	if err == nil && res.ExitCode == 0 {
		t.Fatalf("512 MiB under a %d MiB limit: %+v", mem>>20, res)
	}
	limitHit(t, p, err, compute.ResourceMemory, mem, false)
	if out := mustExec(t, sb, compute.ExecRequest{Command: "echo alive"}); out != "alive\n" {
		t.Errorf("after the memory hog: %q", out)
	}
}

// computeLimitWorkspaceWrite: WriteFile past the workspace limit is refused
// and writes nothing; a write that fits succeeds.
func computeLimitWorkspaceWrite(t *testing.T, p compute.Provider) {
	const ws = 4 << 20
	ctx := testCtx(t)
	sb := openLimited(t, p, compute.Limits{WorkspaceBytes: ws})
	err := sb.WriteFile(ctx, "big.bin", make([]byte, ws+1))
	limitHit(t, p, err, compute.ResourceWorkspace, ws, true)
	if _, _, err := sb.ReadFile(ctx, "big.bin", 1); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("the refused write left a file: %v", err)
	}
	mustWrite(t, sb, "small.txt", strings.Repeat("x", 1<<20))
	mustWrite(t, sb, "small.txt", strings.Repeat("y", 2<<20)) // replacing frees the old content
}

// computeLimitWorkspaceExec: a command that fills the workspace past its
// limit returns the workspace LimitError, however it does it: one file or
// several; files below more directories than a path can name (PATH_MAX);
// files in a directory it then makes unreadable (which an unprivileged
// provider cannot measure, and counts as over the limit); many empty files
// (each takes an inode). Once the files are removed commands and writes
// succeed again. A command that goes on after filling the workspace is
// stopped while it runs.
func computeLimitWorkspaceExec(t *testing.T, p compute.Provider) {
	const ws = 4 << 20
	const fill = "for i in 1 2 3; do head -c 2097152 /dev/zero > part$i.bin; done"
	const deep = `d=$(printf 'd%.0s' $(seq 200)); for i in $(seq 24); do mkdir $d && cd -P $d || exit 1; done; `
	sb := openLimited(t, p, compute.Limits{WorkspaceBytes: ws})
	for _, c := range []struct{ name, cmd string }{
		{"one file", "head -c 8388608 /dev/zero > one.bin"},
		{"three files", fill},
		{"beyond PATH_MAX", deep + fill},
		{"unreadable", "mkdir locked && cd locked && " + fill + " && chmod 000 ."},
		{"empty files", "mkdir empty && cd empty && seq 1 2000 | xargs touch"}, // an inode each: at least 4 KiB
	} {
		_, err := sb.Exec(testCtx(t), compute.ExecRequest{Command: c.cmd, Timeout: time.Minute})
		t.Logf("%s: %v", c.name, err)
		limitHit(t, p, err, compute.ResourceWorkspace, ws, true)
		if err := sb.WriteFile(testCtx(t), "more.txt", []byte("x")); !errors.Is(err, compute.ErrLimit) {
			t.Errorf("%s: WriteFile over the limit: %v, want ErrLimit", c.name, err)
		}
		mustExec(t, sb, compute.ExecRequest{Command: "chmod 700 locked 2>/dev/null; rm -rf one.bin part*.bin ./d* locked empty"})
	}
	mustWrite(t, sb, "more.txt", "fits again")

	// One that goes on after it filled the workspace is stopped while it
	// runs, not after: it never gets to its last step.
	res, err := sb.Exec(testCtx(t), compute.ExecRequest{Command: fill + "; sleep 100; touch finished", Timeout: 110 * time.Second})
	limitHit(t, p, err, compute.ResourceWorkspace, ws, true)
	if res.TimedOut || res.Duration >= 100*time.Second {
		t.Errorf("the command writing past the limit ran on: %+v", res)
	}
	if _, _, err := sb.ReadFile(testCtx(t), "finished", 1); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("the command writing past the limit finished: %v", err)
	}
	mustExec(t, sb, compute.ExecRequest{Command: "rm -f part*.bin"})
	mustWrite(t, sb, "more.txt", "fits again")
}
