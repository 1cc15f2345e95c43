package contracttests

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// Fake secrets the suite puts in the test process's environment; no sandboxed
// process may see them.
var computeSecrets = map[string]string{
	"XBOT_LLM_API_KEY": "sk-secret-test",
	"XBOT_PG_DSN":      "postgres://secret",
}

// killWithin is compute.Sandbox's promise: Exec returns, and the command's
// processes are gone, this long after a kill is due.
const killWithin = 2 * time.Second

// ComputeProvider runs the compute.Provider conformance suite. newProvider
// returns a fresh provider for one subtest (its own base directory, below
// t.TempDir()).
//
// The suite sets fake secrets with t.Setenv, so the calling test must not
// call t.Parallel; the subtests run in parallel. Commands use POSIX sh and
// coreutils only, and relative paths or $HOME rather than /workspace, so they
// also hold for a provider whose processes see host paths (local). Process
// checks scan this machine's /proc for a unique marker in command lines, so
// the provider must run its processes on this machine.
func ComputeProvider(t *testing.T, newProvider func(t *testing.T) compute.Provider) {
	for k, v := range computeSecrets {
		t.Setenv(k, v)
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, p compute.Provider)
	}{
		{"Layout", computeLayout},
		{"InvalidSpec", computeInvalidSpec},
		{"Paths", computePaths},
		{"EscapeDotDot", computeEscapeDotDot},
		{"EscapeSymlink", computeEscapeSymlink},
		{"ReadLimit", computeReadLimit},
		{"ListDepth", computeListDepth},
		{"ListBounded", computeListBounded},
		{"ExecStatusAndStreams", computeExecStatus},
		{"ExecStreamsAsProduced", computeExecStreaming},
		{"ExecCwd", computeExecCwd},
		{"ExecTimeoutKills", computeExecTimeout},
		{"ExecCancelKillsGroup", computeExecCancel},
		{"KillAndClose", computeKillAndClose},
		{"KillDuringStart", computeKillDuringStart},
		{"NoSecretsInEnv", computeNoSecrets},
		{"WorkspacePerKey", computeWorkspacePerKey},
		{"Destroy", computeDestroy},
		{"DestroyWhileRunning", computeDestroyWhileRunning},
	}
	tests = append(tests, limitCases()...)
	tests = append(tests, optionCases()...)
	tests = append(tests, mountCases()...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, newProvider(t))
		})
	}
	computeIsolation(t, newProvider)
}

func computeLayout(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("layout"), "s1", "r1")
	want := compute.Paths{WorkingDirectory: "/workspace", Workspace: "/workspace", Context: "/sessions/s1/context",
		Input: "/sessions/s1/runs/r1/input", Output: "/sessions/s1/runs/r1/output", Tmp: "/sessions/s1/runs/r1/tmp"}
	if got := sb.Paths(); got != want {
		t.Fatalf("Paths() = %+v, want %+v", got, want)
	}
	for _, dir := range []string{want.Workspace, want.Context, want.Input, want.Output, want.Tmp} {
		if _, err := sb.ListFiles(ctx, dir, 1); err != nil {
			t.Errorf("ListFiles(%s): %v", dir, err)
		}
	}
	out := mustExec(t, sb, compute.ExecRequest{
		Command: `test -d "$HOME" && test -d "$TMPDIR" && [ "$(pwd -P)" = "$(cd "$HOME" && pwd -P)" ] && echo ok`})
	if out != "ok\n" {
		t.Errorf("HOME, TMPDIR or cwd wrong: %q", out)
	}
	noSession := openSandbox(t, p, newKey("layout"), "", "r1")
	if got := noSession.Paths().Context; got != "/sessions/_/context" {
		t.Errorf("context without a session = %s, want /sessions/_/context", got)
	}
}

func computeInvalidSpec(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	good := compute.Spec{Key: newKey("invalid"), SessionID: "s", RunID: "r"}
	bad := map[string]func(*compute.Spec){
		"empty tenant":    func(s *compute.Spec) { s.Key.TenantID = "" },
		"empty workspace": func(s *compute.Spec) { s.Key.WorkspaceID = "" },
		"empty agent":     func(s *compute.Spec) { s.Key.AgentID = "" },
		"empty owner":     func(s *compute.Spec) { s.Key.OwnerID = "" },
		"empty run":       func(s *compute.Spec) { s.RunID = "" },
		"env not k=v":     func(s *compute.Spec) { s.Env = []string{"NOEQUALS"} },
	}
	for name, change := range bad {
		spec := good
		change(&spec)
		if sb, err := p.Open(ctx, spec); err == nil {
			_ = sb.Close()
			t.Errorf("%s: Open succeeded", name)
		}
	}
}

func computePaths(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("paths"), "s", "r")
	ps := sb.Paths()
	mustWrite(t, sb, "dir/a.txt", "relative")
	if got := mustRead(t, sb, "/workspace/dir/a.txt"); got != "relative" {
		t.Errorf("absolute read of a relative write = %q", got)
	}
	if out := mustExec(t, sb, compute.ExecRequest{Command: "cat dir/a.txt"}); out != "relative" {
		t.Errorf("the process sees %q", out)
	}
	mustWrite(t, sb, "dir/a.txt", "x")
	if got := mustRead(t, sb, "dir/a.txt"); got != "x" {
		t.Errorf("overwrite left %q", got)
	}
	for _, dir := range []string{ps.Context, ps.Output, ps.Tmp} {
		mustWrite(t, sb, dir+"/f.txt", dir)
		if got := mustRead(t, sb, dir+"/f.txt"); got != dir {
			t.Errorf("%s: read %q", dir, got)
		}
	}
	if err := sb.WriteFile(ctx, ps.Input+"/f.txt", []byte("no")); err == nil {
		t.Error("WriteFile into the run's input succeeded")
	}
	if _, _, err := sb.ReadFile(ctx, ps.Input+"/f.txt", 0); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("read of a refused input write: %v, want ErrNotFound", err)
	}
	if _, _, err := sb.ReadFile(ctx, "missing.txt", 0); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("ReadFile(missing): %v, want ErrNotFound", err)
	}
	if _, err := sb.ListFiles(ctx, "missing", 1); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("ListFiles(missing): %v, want ErrNotFound", err)
	}
}

func computeEscapeDotDot(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("dotdot"), "s", "r")
	for _, path := range []string{"../x", "../../../../etc/passwd", "a/../../x", "/workspace/../etc/passwd",
		"/etc/passwd", "/", "/sessions", "/sessions/other/context/x", "/sessions/s/runs/other/output/x"} {
		if _, _, err := sb.ReadFile(ctx, path, 0); !errors.Is(err, compute.ErrPathOutside) {
			t.Errorf("ReadFile(%s): %v, want ErrPathOutside", path, err)
		}
		if _, err := sb.ListFiles(ctx, path, 1); !errors.Is(err, compute.ErrPathOutside) {
			t.Errorf("ListFiles(%s): %v, want ErrPathOutside", path, err)
		}
	}
	if err := sb.WriteFile(ctx, "../../escape.txt", []byte("x")); !errors.Is(err, compute.ErrPathOutside) {
		t.Errorf("WriteFile(../../escape.txt): %v, want ErrPathOutside", err)
	}
	if _, err := sb.Exec(ctx, compute.ExecRequest{Command: "true", Cwd: "/etc"}); !errors.Is(err, compute.ErrPathOutside) {
		t.Errorf("Exec with cwd /etc: %v, want ErrPathOutside", err)
	}
}

func computeEscapeSymlink(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	host := t.TempDir()
	secret := filepath.Join(host, "secret.txt")
	if err := os.WriteFile(secret, []byte("host-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	sb := openSandbox(t, p, newKey("symlink"), "s", "r")
	mustWrite(t, sb, "dir/in.txt", "inside")
	mustExec(t, sb, compute.ExecRequest{Command: fmt.Sprintf(
		"ln -s /etc/shadow shadow && ln -s %[1]s/secret.txt leak && ln -s ../../../../../../../../..%[1]s/secret.txt leakrel"+
			" && ln -s %[1]s leakdir && ln -s / rootlink && ln -s dir/in.txt inner && echo ok", host)})
	for _, path := range []string{"shadow", "leak", "leakrel", "leakdir/secret.txt", "rootlink/etc/passwd"} {
		// The content is not printed: it may be a host file such as /etc/shadow.
		data, _, err := sb.ReadFile(ctx, path, 0)
		if len(data) > 0 || !refused(err) {
			t.Errorf("ReadFile(%s) = %d bytes, %v; want ErrPathOutside (or not found / permission)", path, len(data), err)
		}
	}
	for _, path := range []string{"leakdir/pwned", "leak", "rootlink" + host + "/pwned"} {
		if err := sb.WriteFile(ctx, path, []byte("pwned")); !refused(err) {
			t.Errorf("WriteFile(%s): %v; want ErrPathOutside (or not found / permission)", path, err)
		}
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != "host-secret" {
		t.Errorf("host file changed: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(host, "pwned")); err == nil {
		t.Error("a write through a symlink created a host file")
	}
	if _, err := sb.ListFiles(ctx, "leakdir", 1); !refused(err) {
		t.Errorf("ListFiles(leakdir): %v; want ErrPathOutside (or not found / permission)", err)
	}
	if got := mustRead(t, sb, "inner"); got != "inside" {
		t.Errorf("a symlink that stays inside reads %q", got)
	}
	files, err := sb.ListFiles(ctx, "", 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Path, "/workspace/leakdir/") || strings.HasPrefix(f.Path, "/workspace/rootlink/") {
			t.Errorf("ListFiles followed a symlink: %s", f.Path)
		}
	}
}

func refused(err error) bool {
	return errors.Is(err, compute.ErrPathOutside) || errors.Is(err, compute.ErrNotFound) || errors.Is(err, fs.ErrPermission)
}

func computeReadLimit(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("limit"), "s", "r")
	mustWrite(t, sb, "ten.txt", "0123456789")
	for _, tc := range []struct {
		limit     int64
		want      string
		truncated bool
	}{{4, "0123", true}, {9, "012345678", true}, {10, "0123456789", false}, {11, "0123456789", false},
		{0, "0123456789", false}, {-1, "0123456789", false}} {
		data, truncated, err := sb.ReadFile(ctx, "ten.txt", tc.limit)
		if err != nil || string(data) != tc.want || truncated != tc.truncated {
			t.Errorf("ReadFile(limit %d) = %q, %v, %v; want %q, %v", tc.limit, data, truncated, err, tc.want, tc.truncated)
		}
	}
	if _, _, err := sb.ReadFile(ctx, "/workspace", 0); err == nil {
		t.Error("ReadFile of a directory succeeded")
	}
	mustExec(t, sb, compute.ExecRequest{Command: "mkfifo fifo"})
	done := make(chan error, 1)
	go func() {
		_, _, err := sb.ReadFile(ctx, "fifo", 0)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("ReadFile of a FIFO succeeded")
		}
	case <-time.After(killWithin):
		t.Error("ReadFile of a FIFO blocks")
	}
}

func computeListDepth(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("list"), "s", "r")
	mustWrite(t, sb, "a/b/c/d.txt", "four")
	mustWrite(t, sb, "top.txt", "one")
	all := []compute.FileInfo{{Path: "/workspace/a", IsDir: true}, {Path: "/workspace/a/b", IsDir: true},
		{Path: "/workspace/a/b/c", IsDir: true}, {Path: "/workspace/a/b/c/d.txt", Size: 4},
		{Path: "/workspace/top.txt", Size: 3}}
	pick := func(idx ...int) []compute.FileInfo {
		var out []compute.FileInfo
		for _, i := range idx {
			out = append(out, all[i])
		}
		return out
	}
	for _, tc := range []struct {
		dir   string
		depth int
		want  []compute.FileInfo
	}{{"", 1, pick(0, 4)}, {"/workspace", 2, pick(0, 1, 4)}, {".", 3, pick(0, 1, 2, 4)},
		{"/workspace", 4, pick(0, 1, 2, 3, 4)}, {"/workspace", 9, pick(0, 1, 2, 3, 4)}, {"a", 1, pick(1)},
		{"a/b", 2, pick(2, 3)}} {
		got, err := sb.ListFiles(ctx, tc.dir, tc.depth)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ListFiles(%q, %d) = %+v, %v; want %+v", tc.dir, tc.depth, got, err, tc.want)
		}
	}
	if _, err := sb.ListFiles(ctx, "top.txt", 1); err == nil {
		t.Error("ListFiles of a file succeeded")
	}
}

// computeListBounded: a listing holds at most compute.MaxListed entries,
// however many the sandbox made (a directory with more, and one with
// fewer beside it whose entries would follow them), sorted by path.
func computeListBounded(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("listmax"), "s", "r")
	mustExec(t, sb, compute.ExecRequest{Timeout: time.Minute, Command: fmt.Sprintf(
		"mkdir many more && cd many && seq 1 %d | xargs touch && cd ../more && seq 1 10 | xargs touch", compute.MaxListed+5)})
	for _, depth := range []int{1, 2} {
		got, err := sb.ListFiles(ctx, "/workspace", depth)
		if err != nil {
			t.Fatalf("ListFiles(depth %d): %v", depth, err)
		}
		want := 2
		if depth == 2 {
			want = compute.MaxListed
		}
		if len(got) != want {
			t.Errorf("ListFiles(depth %d) listed %d entries, want %d", depth, len(got), want)
		}
		if !slices.IsSortedFunc(got, func(a, b compute.FileInfo) int { return strings.Compare(a.Path, b.Path) }) {
			t.Errorf("ListFiles(depth %d) is not sorted by path", depth)
		}
	}
}

func computeExecStatus(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("exec"), "s", "r")
	var stdout, stderr syncBuffer
	res, err := sb.Exec(ctx, compute.ExecRequest{Command: "echo out; echo err >&2; exit 3", Stdout: &stdout, Stderr: &stderr})
	if err != nil || res.ExitCode != 3 || res.TimedOut || stdout.String() != "out\n" || stderr.String() != "err\n" {
		t.Errorf("Exec = %+v, %v, stdout %q, stderr %q; want exit 3, out, err", res, err, stdout.String(), stderr.String())
	}
	var both syncBuffer
	if _, err := sb.Exec(ctx, compute.ExecRequest{Command: "echo a; echo b >&2; echo c", Stdout: &both, Stderr: &both}); err != nil || both.String() != "a\nb\nc\n" {
		t.Errorf("one writer for both streams: %q, %v", both.String(), err)
	}
	if out := mustExec(t, sb, compute.ExecRequest{Command: "cat", Stdin: strings.NewReader("from stdin")}); out != "from stdin" {
		t.Errorf("stdin: %q", out)
	}
	if res, err := sb.Exec(ctx, compute.ExecRequest{Command: "cat; echo done >&2"}); err != nil || res.ExitCode != 0 {
		t.Errorf("nil stdin and writers: %+v, %v", res, err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			var out syncBuffer
			res, err := sb.Exec(ctx, compute.ExecRequest{Command: "echo " + strconv.Itoa(i), Stdout: &out})
			if err != nil || res.ExitCode != 0 || out.String() != strconv.Itoa(i)+"\n" {
				t.Errorf("concurrent exec %d: %+v, %v, %q", i, res, err, out.String())
			}
		})
	}
	wg.Wait()
}

func computeExecStreaming(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("stream"), "s", "r")
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(ctx, compute.ExecRequest{Stdout: &stdout, Stderr: &stderr, Timeout: time.Minute,
			Command: "echo first; echo early >&2; while [ ! -f go ]; do sleep 0.02; done; echo second"})
		done <- err
	}()
	waitFor(t, 30*time.Second, "stdout and stderr before the command ends", func() bool {
		return stdout.String() == "first\n" && stderr.String() == "early\n"
	})
	mustWrite(t, sb, "go", "")
	if err := <-done; err != nil || stdout.String() != "first\nsecond\n" {
		t.Errorf("Exec: %v, stdout %q", err, stdout.String())
	}
}

func computeExecCwd(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("cwd"), "s", "r")
	mustWrite(t, sb, "sub/dir/keep", "")
	mustExec(t, sb, compute.ExecRequest{Command: "echo rel > cwd.txt", Cwd: "sub/dir"})
	mustExec(t, sb, compute.ExecRequest{Command: "echo abs > cwd.txt", Cwd: "/workspace/sub"})
	mustExec(t, sb, compute.ExecRequest{Command: "echo out > cwd.txt", Cwd: sb.Paths().Output})
	for path, want := range map[string]string{"sub/dir/cwd.txt": "rel\n", "sub/cwd.txt": "abs\n",
		sb.Paths().Output + "/cwd.txt": "out\n"} {
		if got := mustRead(t, sb, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if _, err := sb.Exec(ctx, compute.ExecRequest{Command: "true", Cwd: "nope"}); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("missing cwd: %v, want ErrNotFound", err)
	}
	if _, err := sb.Exec(ctx, compute.ExecRequest{Command: "true", Cwd: "sub/dir/keep"}); err == nil {
		t.Error("a file as cwd was accepted")
	}
}

func computeExecTimeout(t *testing.T, p compute.Provider) {
	sb := openSandbox(t, p, newKey("timeout"), "s", "r")
	marker := newMarker()
	var out syncBuffer
	start := time.Now()
	res, err := sb.Exec(testCtx(t), compute.ExecRequest{Command: "sleep " + marker + " & sleep " + marker,
		Timeout: 300 * time.Millisecond, Stdout: &out})
	if took := time.Since(start); err != nil || !res.TimedOut || res.ExitCode == 0 || took > 300*time.Millisecond+killWithin {
		t.Errorf("Exec = %+v, %v after %v; want TimedOut, non-zero exit, within %v", res, err, took, killWithin)
	}
	waitGone(t, marker, killWithin)
}

func computeExecCancel(t *testing.T, p compute.Provider) {
	sb := openSandbox(t, p, newKey("cancel"), "s", "r")
	marker := newMarker()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(ctx, compute.ExecRequest{Stdout: &out, Stderr: &out,
			Command: "sleep " + marker + " & echo $! > child.pid; echo $$ > parent.pid; wait"})
		done <- err
	}()
	waitFor(t, 30*time.Second, "the command's parent and child", func() bool {
		_, _, err := sb.ReadFile(ctx, "child.pid", 0)
		return err == nil && len(computetest.Processes(marker)) >= 2
	})
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Exec after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(killWithin):
		t.Fatalf("Exec still running %v after cancel", killWithin)
	}
	waitGone(t, marker, killWithin)
}

func computeKillAndClose(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("kill"), "s", "r")
	marker := newMarker()
	done := make(chan error, 1)
	go func() {
		_, err := sb.Exec(ctx, compute.ExecRequest{Command: "sleep " + marker + " & sleep " + marker})
		done <- err
	}()
	waitFor(t, 30*time.Second, "the command", func() bool { return len(computetest.Processes(marker)) >= 2 })
	if err := sb.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Exec after Kill: %v, want a result", err)
		}
	case <-time.After(killWithin):
		t.Fatalf("Exec still running %v after Kill", killWithin)
	}
	waitGone(t, marker, killWithin)
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Exec(ctx, compute.ExecRequest{Command: "true"}); err == nil {
		t.Error("Exec after Close succeeded")
	}
}

// computeKillDuringStart kills as soon as the first process of a command
// exists, while the provider may still be setting the sandbox up.
func computeKillDuringStart(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb := openSandbox(t, p, newKey("killstart"), "s", "r")
	for range 10 {
		marker := newMarker()
		done := make(chan error, 1)
		go func() {
			_, err := sb.Exec(ctx, compute.ExecRequest{Command: "sleep " + marker + " & sleep " + marker})
			done <- err
		}()
		waitFor(t, 30*time.Second, "the command's first process", func() bool { return len(computetest.Processes(marker)) > 0 })
		if err := sb.Kill(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Exec after Kill: %v, want a result", err)
			}
		case <-time.After(killWithin):
			t.Fatalf("Exec still running %v after Kill", killWithin)
		}
		waitGone(t, marker, killWithin)
	}
}

func computeNoSecrets(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb, err := p.Open(ctx, compute.Spec{Key: newKey("env"), SessionID: "s", RunID: "r", Env: []string{"EXTRA_VAR=allowed"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	out := mustExec(t, sb, compute.ExecRequest{Command: `env; echo ---; tr '\0' '\n' < /proc/self/environ`})
	for k, v := range computeSecrets {
		if strings.Contains(out, "XBOT_") || strings.Contains(out, v) {
			t.Errorf("the sandbox sees %s or XBOT_*:\n%s", k, out)
		}
	}
	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "LANG": true, "EXTRA_VAR": true,
		"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true}
	for line := range strings.Lines(out) {
		name, _, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && !allowed[name] {
			t.Errorf("variable %s is not on the allow-list", name)
		}
	}
	for _, want := range []string{"PATH=/usr/local/bin:/usr/bin:/bin\n", "LANG=C.UTF-8\n", "EXTRA_VAR=allowed\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

func computeWorkspacePerKey(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	key := newKey("shared")
	first := openSandbox(t, p, key, "s1", "r1")
	mustExec(t, first, compute.ExecRequest{Command: "echo shared > s.txt"})
	mustWrite(t, first, first.Paths().Output+"/o.txt", "r1")
	second := openSandbox(t, p, key, "s2", "r2")
	if out := mustExec(t, second, compute.ExecRequest{Command: "cat s.txt"}); out != "shared\n" {
		t.Errorf("same key, second run sees %q", out)
	}
	if _, _, err := second.ReadFile(ctx, second.Paths().Output+"/o.txt", 0); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("the second run sees the first run's output: %v", err)
	}
	other := key
	other.OwnerID += "-other"
	for _, k := range []compute.Key{other, {TenantID: "..", WorkspaceID: "a/b", AgentID: ".", OwnerID: key.OwnerID},
		{TenantID: key.TenantID + "/" + key.WorkspaceID, WorkspaceID: key.AgentID, AgentID: key.OwnerID, OwnerID: "x"}} {
		sb := openSandbox(t, p, k, "s1", "r1")
		if _, _, err := sb.ReadFile(ctx, "s.txt", 0); !errors.Is(err, compute.ErrNotFound) {
			t.Errorf("key %+v sees another key's workspace: %v", k, err)
		}
		if res, err := sb.Exec(ctx, compute.ExecRequest{Command: "test -e s.txt"}); err != nil || res.ExitCode == 0 {
			t.Errorf("key %+v: the process sees another key's workspace (%+v, %v)", k, res, err)
		}
	}
}

func computeDestroy(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	key := newKey("destroy")
	sb := openSandbox(t, p, key, "s", "r")
	mustWrite(t, sb, "f.txt", "x")
	if err := p.Destroy(ctx, key); err != nil {
		t.Fatal(err)
	}
	again := openSandbox(t, p, key, "s", "r")
	if _, _, err := again.ReadFile(ctx, "f.txt", 0); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("after Destroy: %v, want ErrNotFound", err)
	}
}

// Helpers.

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newKey(prefix string) compute.Key {
	return compute.Key{TenantID: "tenant", WorkspaceID: "ws", AgentID: "agent", OwnerID: prefix + "-" + nonce()}
}

func nonce() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1e9))
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%09d", n.Int64())
}

// newMarker is a sleep duration of 600 s whose digits no other process
// carries in its command line.
func newMarker() string { return "600." + nonce() }

func openSandbox(t *testing.T, p compute.Provider, key compute.Key, session, run string) compute.Sandbox {
	t.Helper()
	sb, err := p.Open(testCtx(t), compute.Spec{Key: key, SessionID: session, RunID: run})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

func mustExec(t *testing.T, sb compute.Sandbox, req compute.ExecRequest) string {
	t.Helper()
	var stdout, stderr syncBuffer
	req.Stdout, req.Stderr, req.Timeout = &stdout, &stderr, time.Minute
	res, err := sb.Exec(testCtx(t), req)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Exec(%q) = %+v, %v; stderr %q", req.Command, res, err, stderr.String())
	}
	return stdout.String()
}

func mustWrite(t *testing.T, sb compute.Sandbox, path, data string) {
	t.Helper()
	if err := sb.WriteFile(testCtx(t), path, []byte(data)); err != nil {
		t.Fatalf("WriteFile(%s): %v", path, err)
	}
}

func mustRead(t *testing.T, sb compute.Sandbox, path string) string {
	t.Helper()
	data, _, err := sb.ReadFile(testCtx(t), path, 0)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", path, err)
	}
	return string(data)
}

// waitFor polls cond until it holds or total elapses.
func waitFor(t *testing.T, total time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(total)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("no %s within %v", what, total)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitGone fails unless every process carrying marker is gone within total.
func waitGone(t *testing.T, marker string, total time.Duration) {
	t.Helper()
	deadline := time.After(total)
	for {
		left := computetest.Processes(marker)
		if len(left) == 0 {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("processes still running %v after the kill: %v", total, left)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
