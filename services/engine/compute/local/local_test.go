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

// providerIn returns a local provider whose sandboxes live below dir.
func providerIn(tb testing.TB, dir string) compute.Provider {
	tb.Helper()
	p, err := local.New(local.Config{Dir: dir, Logger: zap.NewNop()})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

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

// runDirs are a run's directories below its key directory.
var runDirs = []string{"workspace", "sessions/s/context", "sessions/s/runs/r/input",
	"sessions/s/runs/r/output", "sessions/s/runs/r/tmp"}

func TestHostLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := providerIn(t, dir)
	sb := open(t, p, compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
	ps := sb.Paths()
	for _, cwd := range []string{ps.Workspace, ps.Context, ps.Input, ps.Output, ps.Tmp} {
		if _, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true", Cwd: cwd}); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range runDirs {
		if fi, err := os.Stat(filepath.Join(dir, "t/w/a/o", d)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", d, err)
		}
	}
	sb = open(t, p, compute.Key{TenantID: "..", WorkspaceID: "../../etc", AgentID: ".", OwnerID: "a/b"})
	if err := sb.WriteFile(t.Context(), "f.txt", nil); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "%2E.", "%2E.%2F..%2Fetc", "%2E", "a%2Fb", "workspace")
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Errorf("escaped key directory %s: %v", want, err)
	}
}

// TestDirectoriesOnFirstNeed: opening a sandbox creates nothing on the host,
// and neither do reads and listings; a write creates the directory it
// writes into, a command all of the run's directories.
func TestDirectoriesOnFirstNeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := providerIn(t, dir)
	sb := open(t, p, compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
	ps := sb.Paths()
	for _, d := range []string{ps.Workspace, ps.Context, ps.Input, ps.Output, ps.Tmp} {
		if files, err := sb.ListFiles(t.Context(), d, 1); err != nil || len(files) != 0 {
			t.Errorf("ListFiles(%s) before anything exists = %v, %v; want empty", d, files, err)
		}
	}
	if _, _, err := sb.ReadFile(t.Context(), "f.txt", 0); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("ReadFile before anything exists: %v, want ErrNotFound", err)
	}
	if _, err := sb.ListFiles(t.Context(), "sub", 1); !errors.Is(err, compute.ErrNotFound) {
		t.Errorf("ListFiles(sub) before anything exists: %v, want ErrNotFound", err)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Fatalf("open, reads and listings created %v (%v)", ents, err)
	}
	if err := sb.WriteFile(t.Context(), ps.Output+"/o.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, "t/w/a/o")
	if _, err := os.Stat(filepath.Join(key, "sessions/s/runs/r/output/o.txt")); err != nil {
		t.Error(err)
	}
	for _, d := range []string{"workspace", "sessions/s/context", "sessions/s/runs/r/input", "sessions/s/runs/r/tmp"} {
		if _, err := os.Stat(filepath.Join(key, d)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a write into the output created %s (%v)", d, err)
		}
	}
	if _, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"workspace", "sessions/s/runs/r/output", "sessions/s/runs/r/tmp"} {
		if fi, err := os.Stat(filepath.Join(key, d)); err != nil || !fi.IsDir() {
			t.Errorf("after a command %s: %v", d, err)
		}
	}
	for _, d := range []string{"sessions/s/context", "sessions/s/runs/r/input"} {
		if _, err := os.Stat(filepath.Join(key, d)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a command created %s, which it cannot reach by its sandbox path (%v)", d, err)
		}
	}
	if _, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true", Cwd: ps.Context}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(key, "sessions/s/context")); err != nil {
		t.Errorf("a command in the context directory: %v", err)
	}
	if err := p.Destroy(t.Context(), compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(key); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Destroy left the key directory (%v)", err)
	}
	if err := sb.WriteFile(t.Context(), "late.txt", nil); err == nil {
		t.Error("a write through a destroyed sandbox succeeded")
	}
	if _, err := os.Stat(key); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a destroyed sandbox created its directories again (%v)", err)
	}
}

func TestProcessSeesHostPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := providerIn(t, dir)
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

// TestPlantedSymlinkIsNotFollowed: a symlink planted where a run's
// directory goes makes its creation fail and creates nothing where it
// points.
func TestPlantedSymlinkIsNotFollowed(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	p := providerIn(t, dir)
	key := filepath.Join(dir, "t/w/a/o")
	for target, link := range map[string]string{outside: "sessions", filepath.Join(outside, "ws"): "workspace"} {
		if err := os.MkdirAll(key, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(key, link)); err != nil {
			t.Fatal(err)
		}
		sb := open(t, p, compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
		if _, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"}); err == nil {
			t.Errorf("a command ran with %s a symlink", link)
		}
		if ents, err := os.ReadDir(outside); err != nil || len(ents) != 0 {
			t.Errorf("with %s a symlink, created %v outside (%v)", link, ents, err)
		}
		if err := os.RemoveAll(key); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSequentialCommandsShareASubgroup: with cgroups, a command runs in the
// subgroup the previous command of its sandbox left empty; two at once get
// two.
func TestSequentialCommandsShareASubgroup(t *testing.T) {
	t.Parallel()
	p, err := local.New(local.Config{Dir: t.TempDir(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(p.Mechanism(), "rlimit") {
		t.Skip("no cgroups here: " + p.Mechanism())
	}
	sb := open(t, p, compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"})
	group := func(command string) string {
		var out bytes.Buffer
		if _, err := sb.Exec(t.Context(), compute.ExecRequest{Command: command, Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	first, second := group("cat /proc/self/cgroup"), group("cat /proc/self/cgroup")
	if !strings.Contains(first, ".cmd") || first != second {
		t.Errorf("sequential commands ran in\n%s\nand\n%s\nwant one subgroup", first, second)
	}
	done := make(chan error, 1)
	go func() { // each waits until the other has written its group
		_, err := sb.Exec(t.Context(), compute.ExecRequest{Timeout: time.Minute,
			Command: "cat /proc/self/cgroup > a.tmp && mv a.tmp a; while [ ! -f b ]; do sleep 0.01; done"})
		done <- err
	}()
	group("cat /proc/self/cgroup > b.tmp && mv b.tmp b; while [ ! -f a ]; do sleep 0.01; done")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	a, _, errA := sb.ReadFile(t.Context(), "a", 0)
	b, _, errB := sb.ReadFile(t.Context(), "b", 0)
	if errA != nil || errB != nil || string(a) == string(b) {
		t.Errorf("concurrent commands ran in\n%s\nand\n%s\n(%v, %v); want two subgroups", a, b, errA, errB)
	}
}

// TestARunLeavesOnlyWhatItKept: when a run's last handle closes, its own
// directories that are empty are removed, and its directory once nothing is
// left in it, and its session's once no handle of the session is open;
// what a run wrote stays, and so does the key's workspace. A second handle
// of the run keeps them until it closes too.
func TestARunLeavesOnlyWhatItKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := providerIn(t, dir)
	k := compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
	key := filepath.Join(dir, "t/w/a/o")
	openRun := func(run string) compute.Sandbox {
		sb, err := p.Open(t.Context(), compute.Spec{Key: k, SessionID: "s", RunID: run})
		if err != nil {
			t.Fatal(err)
		}
		return sb
	}
	exists := func(rel string) bool {
		_, err := os.Lstat(filepath.Join(key, rel))
		return err == nil
	}

	for i := range 20 { // runs whose commands leave nothing
		sb := openRun("empty-" + strconv.Itoa(i))
		if _, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true"}); err != nil {
			t.Fatal(err)
		}
		if !exists("sessions/s/runs/empty-" + strconv.Itoa(i) + "/tmp") {
			t.Fatal("a command did not create the run's tmp")
		}
		if err := sb.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(key, "sessions")); err != nil || len(ents) != 0 {
		t.Errorf("twenty runs of a session that kept nothing left %v (%v)", ents, err)
	}
	if got, want := dirNames(t, key), "sessions spare spare-session workspace"; got != want {
		t.Errorf("the key holds %q, want %q", got, want)
	}
	if got := dirNames(t, filepath.Join(key, "spare")); got != "tmp" || dirNames(t, filepath.Join(key, "spare/tmp")) != "" {
		t.Errorf("the key's spare run directory holds %q", got)
	}
	if got := dirNames(t, filepath.Join(key, "spare-session")); got != "runs" || dirNames(t, filepath.Join(key, "spare-session/runs")) != "" {
		t.Errorf("the key's spare session directory holds %q", got)
	}

	kept := openRun("kept")
	ps := kept.Paths()
	if err := kept.WriteFile(t.Context(), ps.Output+"/report.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Exec(t.Context(), compute.ExecRequest{Command: "touch $TMPDIR/scratch"}); err != nil {
		t.Fatal(err)
	}
	if err := kept.Close(); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{"sessions/s/runs/kept/output/report.txt": true,
		"sessions/s/runs/kept/tmp/scratch": true, "sessions/s/runs/kept/input": false} {
		if exists(rel) != want {
			t.Errorf("after the run closed, %s exists: %v, want %v", rel, !want, want)
		}
	}

	first, second := openRun("twice"), openRun("twice")
	if _, err := first.Exec(t.Context(), compute.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if !exists("sessions/s/runs/twice/tmp") {
		t.Fatal("closing one handle removed the directories another handle of the run uses")
	}
	if res, err := second.Exec(t.Context(), compute.ExecRequest{Command: `test -d "$TMPDIR"`}); err != nil || res.ExitCode != 0 {
		t.Fatalf("the run's other handle: %+v %v", res, err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if exists("sessions/s/runs/twice") {
		t.Error("the run's last handle closed and its empty directories stayed")
	}
	again := openRun("twice") // resumed: creates them again on first need
	defer again.Close()
	if res, err := again.Exec(t.Context(), compute.ExecRequest{Command: `test -d "$TMPDIR"`}); err != nil || res.ExitCode != 0 {
		t.Fatalf("a new handle of the run after the tidy: %+v %v", res, err)
	}
}

// TestARunHandsItsUntouchedDirectoriesToTheKeysNextRun: a run whose own
// directories are as they were created leaves them as the key's spare (and
// its session's, left empty, as the spare session), and the key's next run
// takes them over instead of creating its own; a run that wrote into one,
// or changed one's mode, hands nothing on. The directories of runs without
// a session stay.
func TestARunHandsItsUntouchedDirectoriesToTheKeysNextRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := providerIn(t, dir)
	key := filepath.Join(dir, "t/w/a/o")
	session := "s"
	run := func(id, command string) {
		t.Helper()
		sb, err := p.Open(t.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"},
			SessionID: session, RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := sb.Close(); err != nil {
				t.Fatal(err)
			}
		}()
		res, err := sb.Exec(t.Context(), compute.ExecRequest{Command: command})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("run %s: %q: %+v %v", id, command, res, err)
		}
	}
	inode := func(rel string) uint64 {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(key, rel))
		if err != nil {
			return 0
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	spared := func() bool { return dirNames(t, filepath.Join(key, "spare")) != "" }

	run("a", "true")
	tmp, sess := inode("spare/tmp"), inode("spare-session")
	if tmp == 0 || sess == 0 || dirNames(t, filepath.Join(key, "spare/tmp")) != "" || dirNames(t, filepath.Join(key, "sessions")) != "" {
		t.Fatalf("run a left the key %q, its spare %q", dirNames(t, key), dirNames(t, filepath.Join(key, "spare")))
	}
	// Run b finds the spares in their places, empty, and writes into its tmp.
	run("b", `test "$(ls -A "$TMPDIR")" = "" && test ! -e "$TMPDIR/../../../../../spare" && touch "$TMPDIR/x"`)
	if got := inode("sessions/s/runs/b/tmp"); got != tmp {
		t.Errorf("run b's tmp is inode %d, the spare's was %d", got, tmp)
	}
	if got := inode("sessions/s"); got != sess {
		t.Errorf("run b's session directory is inode %d, the spare session's was %d", got, sess)
	}
	if spared() || dirNames(t, filepath.Join(key, "sessions/s/runs/b/tmp")) != "x" {
		t.Errorf("run b wrote into its tmp: its directories stay and are not handed on (spare %q)",
			dirNames(t, filepath.Join(key, "spare")))
	}
	run("c", "true") // creates its own; spare again
	// Run d takes c's and changes its mode: not handed on, removed.
	run("d", `chmod 700 "$TMPDIR"`)
	if spared() || dirNames(t, filepath.Join(key, "sessions/s/runs")) != "b" {
		t.Errorf("run d changed its tmp's mode: the key holds %q, spare %q, runs %q", dirNames(t, key),
			dirNames(t, filepath.Join(key, "spare")), dirNames(t, filepath.Join(key, "sessions/s/runs")))
	}
	run("e", `test "$(stat -c %a "$TMPDIR")" = "$(stat -c %a "$TMPDIR/..")"`)

	// Runs without a session share sessions/_ and its runs directory,
	// which stay: one pair per key.
	session = ""
	run("f", "true")
	run("g", "true")
	if got := dirNames(t, filepath.Join(key, "sessions/_")); got != "runs" || dirNames(t, filepath.Join(key, "sessions/_/runs")) != "" || !spared() {
		t.Errorf("after two runs without a session: sessions/_ holds %q, its runs %q, the spare %q", got,
			dirNames(t, filepath.Join(key, "sessions/_/runs")), dirNames(t, filepath.Join(key, "spare")))
	}
}

// dirNames is dir's entries' names, sorted, space-separated ("" when dir
// does not exist).
func dirNames(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return strings.Join(names, " ")
}
