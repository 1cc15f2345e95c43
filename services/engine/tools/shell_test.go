package tools_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// runShell runs the shell tool and collects what it streamed.
func runShell(ctx context.Context, t *testing.T, r *tools.Registry, sb compute.Sandbox, args map[string]any) (tools.Result, map[string]string) {
	t.Helper()
	tool, raw, fail := r.Prepare(tools.ShellName, mustJSON(t, args))
	if fail != nil {
		t.Fatalf("Prepare: %s", fail.Output)
	}
	var mu sync.Mutex // guards nothing the tool should race on: Output is never called concurrently
	streamed := map[string]string{}
	out := func(stream, chunk string) {
		if !mu.TryLock() {
			t.Error("Output called concurrently")
			return
		}
		defer mu.Unlock()
		streamed[stream] += chunk
	}
	res := tool.Run(ctx, tools.Call{ID: "c1", Name: tools.ShellName, Arguments: raw, Sandbox: sb, Output: out})
	return res, streamed
}

func TestShellReportsExitCodeAndOutput(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	res, streamed := runShell(context.Background(), t, tools.Builtin(tools.Options{}), sb,
		map[string]any{"command": "echo out; echo err >&2; exit 3"})
	wantCompleted(t, res)
	x := res.Exec
	if x == nil || x.ExitCode != 3 || x.Stdout != "out\n" || x.Stderr != "err\n" || x.TimedOut || x.Truncated {
		t.Fatalf("Exec = %+v", x)
	}
	if x.Command != "echo out; echo err >&2; exit 3" || x.Cwd != "/workspace" || x.DurationMs < 0 {
		t.Errorf("Exec = %+v", x)
	}
	if want := "exit code: 3\nstdout:\nout\nstderr:\nerr"; res.Output != want {
		t.Errorf("Output = %q, want %q", res.Output, want)
	}
	if streamed["stdout"] != "out\n" || streamed["stderr"] != "err\n" {
		t.Errorf("streamed %q", streamed)
	}
}

func TestShellEmptyOutput(t *testing.T) {
	t.Parallel()
	res, _ := runShell(context.Background(), t, tools.Builtin(tools.Options{}), openSandbox(t),
		map[string]any{"command": "printf done"})
	wantCompleted(t, res)
	if want := "exit code: 0\nstdout:\ndone\nstderr: (empty)"; res.Output != want {
		t.Errorf("Output = %q, want %q", res.Output, want)
	}
}

func TestShellCwd(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	r := tools.Builtin(tools.Options{})
	write(t, sb, "sub/dir/file.txt", "x")
	write(t, sb, sb.Paths().Output+"/report.md", "x")
	cases := []struct{ cwd, want, ls string }{
		{"sub", "/workspace/sub", "dir\n"},
		{"sub/dir/", "/workspace/sub/dir", "file.txt\n"},
		{"/workspace/sub/dir/..", "/workspace/sub", "dir\n"},
		{sb.Paths().Output, sb.Paths().Output, "report.md\n"},
	}
	for _, tc := range cases {
		res, _ := runShell(context.Background(), t, r, sb, map[string]any{"command": "ls", "cwd": tc.cwd})
		wantCompleted(t, res)
		if res.Exec.Cwd != tc.want || res.Exec.Stdout != tc.ls {
			t.Errorf("cwd %q: Exec.Cwd = %q, ls = %q", tc.cwd, res.Exec.Cwd, res.Exec.Stdout)
		}
	}
}

func TestShellBadCwdIsToolError(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	r := tools.Builtin(tools.Options{})
	for cwd, want := range map[string]string{
		"missing":  "working directory /workspace/missing does not exist",
		"/etc":     "working directory /etc is outside the sandbox",
		"../../..": "working directory / is outside the sandbox",
	} {
		res, _ := runShell(context.Background(), t, r, sb, map[string]any{"command": "ls", "cwd": cwd})
		wantError(t, res, events.ToolErrToolError)
		if !strings.Contains(res.Output, want) {
			t.Errorf("cwd %q: %q does not contain %q", cwd, res.Output, want)
		}
	}
}

func TestShellStreamsEverythingAndCapsCapture(t *testing.T) {
	t.Parallel()
	r := tools.Builtin(tools.Options{MaxOutputBytes: 100})
	cmd := `i=0; while [ $i -lt 200 ]; do echo "line $i"; echo "err $i" >&2; i=$((i+1)); done`
	res, streamed := runShell(context.Background(), t, r, openSandbox(t), map[string]any{"command": cmd})
	wantCompleted(t, res)
	var full strings.Builder
	for i := range 200 {
		full.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	if streamed["stdout"] != full.String() {
		t.Errorf("streamed stdout is not the whole output (%d bytes)", len(streamed["stdout"]))
	}
	x := res.Exec
	if !x.Truncated {
		t.Error("Truncated not set")
	}
	head, tail := full.String()[:50], full.String()[full.Len()-50:]
	omitted := full.Len() - 100
	want := head + "\n[... " + strconv.Itoa(omitted) + " bytes omitted ...]\n" + tail
	if x.Stdout != want {
		t.Errorf("Stdout =\n%s\nwant\n%s", x.Stdout, want)
	}
	if !strings.HasPrefix(x.Stderr, "err 0\n") || !strings.HasSuffix(x.Stderr, "err 199\n") || !strings.Contains(x.Stderr, "bytes omitted") {
		t.Errorf("Stderr = %q", x.Stderr)
	}
	if !strings.Contains(res.Output, want) {
		t.Errorf("Output does not carry the capped stdout:\n%s", res.Output)
	}
}

func TestShellTimeoutIsACompletedResult(t *testing.T) {
	t.Parallel()
	r := tools.Builtin(tools.Options{ShellTimeout: time.Second})
	res, _ := runShell(context.Background(), t, r, openSandbox(t), map[string]any{"command": "echo started; sleep 30"})
	wantCompleted(t, res)
	if !res.Exec.TimedOut || res.Exec.Stdout != "started\n" {
		t.Errorf("Exec = %+v", res.Exec)
	}
	if !strings.HasPrefix(res.Output, "timed out after 1s: the command was killed\nexit code: ") {
		t.Errorf("Output = %q", res.Output)
	}
}

func TestShellTimeoutSecondsOverridesDefault(t *testing.T) {
	t.Parallel()
	// A 1ns default would kill anything; the call's own timeout must win.
	r := tools.Builtin(tools.Options{ShellTimeout: time.Nanosecond})
	res, _ := runShell(context.Background(), t, r, openSandbox(t), map[string]any{"command": "echo hi", "timeoutSeconds": 60})
	wantCompleted(t, res)
	if res.Exec.TimedOut || res.Exec.Stdout != "hi\n" {
		t.Errorf("Exec = %+v", res.Exec)
	}
}

func TestShellCancellation(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sb := openSandbox(t)
	tool, _ := tools.Builtin(tools.Options{}).Get(tools.ShellName)
	start := time.Now()
	res := tool.Run(ctx, tools.Call{
		Name: tools.ShellName, Arguments: []byte(`{"command": "echo ready; sleep 30"}`), Sandbox: sb,
		Output: func(_, chunk string) {
			if strings.Contains(chunk, "ready") {
				cancel()
			}
		},
	})
	wantError(t, res, events.ToolErrCancelled)
	if res.Exec == nil || res.Exec.Stdout != "ready\n" {
		t.Errorf("Exec = %+v", res.Exec)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancellation took %s", d)
	}
	res = tool.Run(ctx, tools.Call{Name: tools.ShellName, Arguments: []byte(`{"command": "echo no"}`), Sandbox: sb})
	wantError(t, res, events.ToolErrCancelled)
}

func TestShellSandboxFailureIsToolError(t *testing.T) {
	t.Parallel()
	sb := &faulty{Sandbox: openSandbox(t), execErr: errors.New("runtime gone")}
	res, _ := runShell(context.Background(), t, tools.Builtin(tools.Options{}), sb, map[string]any{"command": "true"})
	wantError(t, res, events.ToolErrToolError)
	if !strings.Contains(res.Output, "could not run the command: runtime gone") {
		t.Errorf("Output = %q", res.Output)
	}
}

// The default capture keeps far more than a preview: Offload stores the real
// output, so 100 KiB must arrive whole.
func TestShellDefaultCaptureKeepsLargeOutput(t *testing.T) {
	t.Parallel()
	res, _ := runShell(context.Background(), t, tools.Builtin(tools.Options{}), openSandbox(t),
		map[string]any{"command": "seq 1 20000"})
	wantCompleted(t, res)
	var want strings.Builder
	for i := 1; i <= 20000; i++ {
		want.WriteString(strconv.Itoa(i) + "\n")
	}
	if want.Len() <= 64<<10 {
		t.Fatalf("test output is only %d bytes", want.Len())
	}
	if res.Exec.Truncated || res.Exec.Stdout != want.String() {
		t.Errorf("Stdout has %d bytes (truncated %v), want %d", len(res.Exec.Stdout), res.Exec.Truncated, want.Len())
	}
}
