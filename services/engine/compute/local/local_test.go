package local_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

func newProvider(t *testing.T) compute.Provider {
	t.Helper()
	p, err := local.New(local.Config{Dir: t.TempDir(), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestContract runs the provider suite (not in parallel: see
// contracttests.ComputeProvider).
func TestContract(t *testing.T) {
	contracttests.ComputeProvider(t, newProvider)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	_, err := local.New(local.Config{})
	if err == nil || !strings.Contains(err.Error(), "Dir") || !strings.Contains(err.Error(), "Logger") {
		t.Fatalf("New(empty config) = %v, want errors for Dir and Logger", err)
	}
}

func TestWarnsOnce(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.WarnLevel)
	p, err := local.New(local.Config{Dir: t.TempDir(), Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	open(t, p, compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
	warned := logs.FilterMessage("local compute provider: no isolation, development only").Len()
	if warned != 1 || logs.Len() != 1 {
		t.Fatalf("%d warnings (%d logs), want exactly one", warned, logs.Len())
	}
}

func TestHostLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := local.New(local.Config{Dir: dir, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	open(t, p, compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
	for _, d := range []string{"workspace", "sessions/s/context", "sessions/s/runs/r/input",
		"sessions/s/runs/r/output", "sessions/s/runs/r/tmp"} {
		if fi, err := os.Stat(filepath.Join(dir, "t/w/a/o", d)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
	open(t, p, compute.Key{TenantID: "..", WorkspaceID: "../../etc", AgentID: ".", OwnerID: "a/b"})
	want := filepath.Join(dir, "%2E.", "%2E.%2F..%2Fetc", "%2E", "a%2Fb", "workspace")
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Errorf("escaped key directory %s: %v", want, err)
	}
}

func TestProcessSeesHostPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := local.New(local.Config{Dir: dir, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	sb := open(t, p, compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
	var out bytes.Buffer
	res, err := sb.Exec(t.Context(), compute.ExecRequest{Command: `echo "$HOME"; echo "$TMPDIR"; pwd -P`, Stdout: &out})
	if err != nil || res.ExitCode != 0 {
		t.Fatal(res, err)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{filepath.Join(dir, "t/w/a/o/workspace"), filepath.Join(dir, "t/w/a/o/sessions/s/runs/r/tmp"),
		filepath.Join(resolved, "t/w/a/o/workspace")}, "\n") + "\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

// TestEscapedProcessDoesNotBlockExec: a process that leaves the command's
// process group (setsid) survives with the local provider when no cgroup
// holds the command (rlimits), but holding the output pipe it cannot keep
// Exec from returning.
func TestEscapedProcessDoesNotBlockExec(t *testing.T) {
	t.Parallel()
	p, err := local.New(local.Config{Dir: t.TempDir(), Logger: zaptest.NewLogger(t), LimitMechanism: "rlimit"})
	if err != nil {
		t.Fatal(err)
	}
	sb := open(t, p, compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
	marker := "600." + strconv.FormatInt(time.Now().UnixNano(), 10)
	t.Cleanup(func() {
		for _, p := range computetest.Processes(marker) {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	})
	var out bytes.Buffer
	start := time.Now()
	res, err := sb.Exec(t.Context(), compute.ExecRequest{Stdout: &out, Command: "setsid sh -c 'touch escaped; exec sleep " +
		marker + "' & while [ ! -f escaped ]; do sleep 0.01; done; echo started"})
	if took := time.Since(start); err != nil || res.ExitCode != 0 || took > 2*time.Second || out.String() != "started\n" {
		t.Fatalf("Exec = %+v, %v, %q after %v; want success within 2s", res, err, out.String(), took)
	}
	if len(computetest.Processes(marker)) == 0 {
		t.Fatal("the escaped process is gone: the test proved nothing")
	}
}

func open(t *testing.T, p compute.Provider, key compute.Key) compute.Sandbox {
	t.Helper()
	sb, err := p.Open(t.Context(), compute.Spec{Key: key, SessionID: "s", RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil && !errors.Is(err, compute.ErrNotFound) {
			t.Error(err)
		}
	})
	return sb
}
