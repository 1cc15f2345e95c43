package bwrap_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// TestContract runs the provider suite (not in parallel: see
// contracttests.ComputeProvider).
func TestContract(t *testing.T) {
	contracttests.ComputeProvider(t, newProvider)
}

// newProvider skips when bwrap cannot run here, except on CI (CI set), where
// that is a failure: CI must not silently skip the sandbox tests.
func newProvider(t *testing.T) compute.Provider {
	t.Helper()
	return newProviderWith(t, bwrap.Config{Dir: computetest.Dir(t)})
}

func newProviderWith(t *testing.T, cfg bwrap.Config) compute.Provider {
	t.Helper()
	cfg.Logger = zaptest.NewLogger(t)
	p, err := bwrap.New(cfg)
	if errors.Is(err, compute.ErrUnavailable) {
		if _, ci := os.LookupEnv("CI"); !ci {
			t.Skipf("bwrap unavailable (set CI to make this a failure): %v", err)
		}
		t.Fatalf("bwrap unavailable on CI: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	_, err := bwrap.New(bwrap.Config{Dir: t.TempDir(), Logger: zap.NewNop(), Binary: "/nonexistent/bwrap"})
	if !errors.Is(err, compute.ErrUnavailable) || !strings.Contains(err.Error(), "apt-get install -y bubblewrap") {
		t.Fatalf("New with a missing binary = %v, want ErrUnavailable with an install hint", err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, paths := range [][]string{{"relative"}, {"/"}, {"/workspace"}, {"/tmp/x"}, {"/opt/../etc"}} {
		if _, err := bwrap.New(bwrap.Config{Dir: t.TempDir(), Logger: zap.NewNop(), ReadOnlyPaths: paths}); err == nil {
			t.Errorf("ReadOnlyPaths %q accepted", paths)
		}
	}
}

func TestSandboxView(t *testing.T) {
	t.Parallel()
	sb := open(t, newProvider(t), compute.Spec{})
	out := run(t, sb, `pwd; echo "$HOME $TMPDIR"; ls /sessions/s/runs/r; grep CapEff /proc/self/status; `+
		`ls /proc | grep -c '^[0-9]'; test -e /etc/shadow || echo no-shadow; test -e /root || echo no-root; `+
		`test -e /home || echo no-home; (: < /dev/tty) 2>/dev/null || echo no-tty; hostname`, 0)
	want := "/workspace\n/workspace /sessions/s/runs/r/tmp\ninput\noutput\ntmp\nCapEff:\t0000000000000000\n"
	if !strings.HasPrefix(out, want) {
		t.Fatalf("got:\n%s\nwant prefix:\n%s", out, want)
	}
	rest := strings.Fields(strings.TrimPrefix(out, want))
	if n, err := strconv.Atoi(rest[0]); err != nil || n > 10 {
		t.Errorf("%s processes visible in /proc: host processes leak in", rest[0])
	}
	if got := strings.Join(rest[1:], " "); got != "no-shadow no-root no-home no-tty sandbox" {
		t.Errorf("host files visible or hostname leaked: %s", got)
	}
}

func TestHostIsReadOnly(t *testing.T) {
	t.Parallel()
	dir := computetest.Dir(t)
	p := newProviderWith(t, bwrap.Config{Dir: dir})
	other := open(t, p, compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "other"}})
	if err := other.WriteFile(t.Context(), "f.txt", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	sb := open(t, p, compute.Spec{})
	passwd := hostFile(t, "/etc/passwd")
	name := "xbot-test-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	t.Cleanup(func() { // only if the sandbox wrongly created them on the host
		_ = os.Remove("/usr/" + name)
		_ = os.Remove("/etc/" + name)
	})
	for _, cmd := range []string{"touch /usr/" + name, "touch /etc/" + name, ": >> /etc/passwd", "touch /" + name,
		"mkdir /newdir", "touch /sessions/s/runs/r/input/x", "touch /sessions/s/runs/r/" + name} {
		run(t, sb, cmd, 1)
	}
	for _, cmd := range []string{"touch /workspace/ok /tmp/ok /sessions/s/context/ok /sessions/s/runs/r/output/ok /sessions/s/runs/r/tmp/ok"} {
		run(t, sb, cmd, 0)
	}
	if hostFile(t, "/etc/passwd") != passwd {
		t.Error("host /etc/passwd changed")
	}
	if _, err := os.Stat("/usr/" + name); err == nil {
		t.Error("the sandbox created a file in the host's /usr")
	}
	mine := filepath.Join(dir, "t", "w", "a", "other", "workspace", "f.txt")
	if hostFile(t, mine) != "mine" {
		t.Fatal("the other key's file is not where the layout puts it")
	}
	run(t, sb, fmt.Sprintf("test ! -e %[1]s && ! echo pwned > %[1]s", mine), 0)
	if hostFile(t, mine) != "mine" {
		t.Error("the sandbox changed another key's file")
	}
}

func TestReadOnlyPaths(t *testing.T) {
	t.Parallel()
	extra, err := os.MkdirTemp("/var/tmp", "xbot-ro-") // not under /tmp, which the sandbox replaces
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(extra) })
	if err := os.Chmod(extra, 0o755); err != nil { // readable by the sandbox user
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "tool"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := newProviderWith(t, bwrap.Config{Dir: computetest.Dir(t), ReadOnlyPaths: []string{extra, "/nonexistent/xbot"}})
	sb := open(t, p, compute.Spec{})
	if out := run(t, sb, "cat "+extra+"/tool", 0); out != "v1" {
		t.Errorf("extra path reads %q", out)
	}
	run(t, sb, "touch "+extra+"/new", 1)
}

// TestNetwork: an isolated sandbox reaches nothing of the host; a networked
// one has a namespace of its own that reaches neither the host's loopback
// (where the runtime's servers listen) nor its other addresses, nor
// link-local or private ranges, unless AllowHosts lists the address.
func TestNetwork(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	ips := hostIPs(t)
	if len(ips) == 0 {
		t.Fatal("this test needs a non-loopback IPv4 address on this host")
	}
	port, got := listen(t)
	connect := func(ip string) string {
		return fmt.Sprintf(`timeout 10 bash -c 'echo hello > /dev/tcp/%s/%d'`, ip, port)
	}
	isolated := open(t, p, compute.Spec{})
	networked := open(t, p, compute.Spec{Network: true,
		Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "net"}})
	for _, sb := range []compute.Sandbox{isolated, networked} {
		for _, ip := range append([]string{"127.0.0.1", "169.254.169.254", "10.0.0.1"}, ips...) {
			run(t, sb, connect(ip), 1)
		}
	}
	select {
	case msg := <-got:
		t.Fatalf("a sandbox reached the host: %q", msg)
	default:
	}
	allowed := open(t, p, compute.Spec{Network: true, AllowHosts: []string{ips[0]},
		Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "allowed"}})
	run(t, allowed, connect("127.0.0.1"), 1)
	// A command's last write is delivered, also when its handle closes
	// right after it and pasta ends: without the wait for the namespace's
	// sockets, about one in four arrived empty when pasta ended with each
	// command.
	const sends = 20
	for i := range sends {
		if i%2 == 0 {
			run(t, allowed, connect(ips[0]), 0)
			continue
		}
		once, err := p.Open(t.Context(), compute.Spec{Network: true, AllowHosts: []string{ips[0]}, SessionID: "s", RunID: "once",
			Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "once"}})
		if err != nil {
			t.Fatal(err)
		}
		run(t, once, connect(ips[0]), 0)
		if err := once.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range sends {
		select {
		case msg := <-got:
			if msg != "hello\n" {
				t.Errorf("connection %d received %q", i, msg)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("allowed connection %d never arrived", i)
		}
	}
}

// TestAHandlesNetworkedCommandsShareItsNamespace: the networked commands
// of one handle run in one network namespace, pasta's, which the handle
// keeps until it closes; another handle has its own. The namespace's
// routes name the handle's allow-list, which the test makes unique to
// find its pasta by.
func TestAHandlesNetworkedCommandsShareItsNamespace(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	marker := fmt.Sprintf("198.18.%d.%d", rand.IntN(256), 1+rand.IntN(254)) // a benchmarking range, blocked anyway
	spec := compute.Spec{Network: true, AllowHosts: []string{marker}, SessionID: "s", RunID: "r",
		Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "shared"}}
	sb, err := p.Open(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sb.Close() }()
	first := run(t, sb, "readlink /proc/self/ns/net", 0)
	if again := run(t, sb, "readlink /proc/self/ns/net", 0); again != first {
		t.Errorf("two commands of a handle ran in namespaces %q and %q", first, again)
	}
	if left := computetest.Processes(marker); len(left) != 2 {
		t.Errorf("the handle's namespace runs as %v, want pasta and its holder", left)
	}
	other := open(t, p, compute.Spec{Network: true, Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "other"}})
	if got := run(t, other, "readlink /proc/self/ns/net", 0); got == first {
		t.Errorf("two handles share the namespace %q", got)
	}
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	eventually.Succeeds(t, 10*time.Second, "the closed handle's pasta ended", func() error {
		if left := computetest.Processes(marker); len(left) > 0 {
			return fmt.Errorf("still running: %v", left)
		}
		return nil
	})
}

// listen accepts TCP connections on every address of this host and sends
// what each one sent before it closed (the first 64 bytes).
func listen(t *testing.T) (int, <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp4", ":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	got := make(chan string, 32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			b, _ := io.ReadAll(io.LimitReader(c, 64))
			got <- string(b)
			_ = c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, got
}

// TestEscapedProcessIsKilled: leaving the process group does not leave the
// PID namespace, so nothing outlives the command.
func TestEscapedProcessIsKilled(t *testing.T) {
	t.Parallel()
	sb := open(t, newProvider(t), compute.Spec{})
	marker := "600." + strconv.FormatInt(time.Now().UnixNano(), 10)
	start := time.Now()
	run(t, sb, "setsid sh -c 'touch escaped; exec sleep "+marker+"' & while [ ! -f escaped ]; do sleep 0.01; done", 0)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Exec took %v", took)
	}
	eventually.Succeeds(t, 2*time.Second, "the escaped process killed", func() error {
		if left := computetest.Processes(marker); len(left) > 0 {
			return fmt.Errorf("still running: %v", left)
		}
		return nil
	})
}

// open opens a sandbox; zero key fields default to t/w/a/o, session s, run r.
func open(t *testing.T, p compute.Provider, spec compute.Spec) compute.Sandbox {
	t.Helper()
	if spec.Key == (compute.Key{}) {
		spec.Key = compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
	}
	spec.SessionID, spec.RunID = "s", "r"
	sb, err := p.Open(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// run runs command and fails unless it exits with want (1 = any failure).
func run(t *testing.T, sb compute.Sandbox, command string, want int) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	res, err := sb.Exec(t.Context(), compute.ExecRequest{Command: command, Stdout: &stdout, Stderr: &stderr, Timeout: time.Minute})
	if err != nil || (want == 0) != (res.ExitCode == 0) {
		t.Fatalf("%s: %+v, %v, want exit %d; stdout %q stderr %q", command, res, err, want, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func hostFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// hostIPs are this host's non-loopback IPv4 addresses.
func hostIPs(t *testing.T) []string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			out = append(out, n.IP.String())
		}
	}
	return out
}

// TestSeccomp: the filter is loaded, and a denied call (personality with
// ADDR_NO_RANDOMIZE, which would switch off address randomisation) fails
// with EPERM instead of killing the process.
func TestSeccomp(t *testing.T) {
	t.Parallel()
	sb := open(t, newProvider(t), compute.Spec{})
	out := run(t, sb, `grep '^Seccomp:' /proc/self/status; setarch "$(uname -m)" -R true 2>&1 || echo denied`, 0)
	if !strings.HasPrefix(out, "Seccomp:\t2\n") || !strings.Contains(out, "Operation not permitted") ||
		!strings.HasSuffix(out, "denied\n") {
		t.Errorf("no seccomp filter, or personality(ADDR_NO_RANDOMIZE) allowed:\n%s", out)
	}
}

// TestHostWritesStayWritable: what the executor writes through the Sandbox
// (as root, or not) the sandboxed user may change and remove.
func TestHostWritesStayWritable(t *testing.T) {
	t.Parallel()
	sb := open(t, newProvider(t), compute.Spec{})
	if err := sb.WriteFile(t.Context(), "dir/sub/f.txt", []byte("host\n")); err != nil {
		t.Fatal(err)
	}
	if err := sb.WriteFile(t.Context(), "/sessions/s/context/c.txt", []byte("host\n")); err != nil {
		t.Fatal(err)
	}
	run(t, sb, "echo tool >> dir/sub/f.txt && touch dir/sub/new && rm -r dir && echo tool >> /sessions/s/context/c.txt", 0)
}

// TestHostPathsHiddenOnAFilesystemOfItsOwn: with the compute directory on a
// filesystem of its own (here a tmpfs), nothing a sandbox can read names the
// directory's host path, /proc/self/mountinfo included. Mounting needs root.
func TestHostPathsHiddenOnAFilesystemOfItsOwn(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting the tmpfs needs root")
	}
	dir := computetest.Dir(t)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=64m,mode=0700"); err != nil {
		t.Fatalf("mount a tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	sb := open(t, newProviderWith(t, bwrap.Config{Dir: dir}), compute.Spec{})
	out := run(t, sb, `cat /proc/self/mountinfo /proc/mounts; env; pwd -P; readlink /proc/self/cwd`, 0)
	if strings.Contains(out, dir) || strings.Contains(out, filepath.Dir(dir)) {
		t.Errorf("the host path %s is visible in the sandbox:\n%s", dir, out)
	}
	if !strings.Contains(out, " /workspace ") {
		t.Errorf("mountinfo has no /workspace mount:\n%s", out)
	}
}

// TestDirectoriesOnFirstNeed: Open creates nothing; a write creates its
// directory, a command the rest, with the layout's owners and modes: the
// run's directories are the sandbox user's, those above them the
// executor's (mode 0755).
func TestDirectoriesOnFirstNeed(t *testing.T) {
	t.Parallel()
	dir := computetest.Dir(t)
	sb := open(t, newProviderWith(t, bwrap.Config{Dir: dir}), compute.Spec{})
	key := filepath.Join(dir, "t/w/a/o")
	if _, err := os.Stat(key); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created the key directory (%v)", err)
	}
	if err := sb.WriteFile(t.Context(), "f.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(key, "sessions")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a write into the workspace created the run's directories (%v)", err)
	}
	run(t, sb, "true", 0)
	owner := os.Getuid()
	if owner == 0 {
		owner = bwrap.DefaultUID
	}
	for d, uid := range map[string]int{"workspace": owner, "sessions/s/context": owner, "sessions/s/runs/r/input": owner,
		"sessions/s/runs/r/output": owner, "sessions/s/runs/r/tmp": owner, "sessions": os.Getuid(),
		"sessions/s/runs/r": os.Getuid()} {
		fi, err := os.Lstat(filepath.Join(key, d))
		if err != nil {
			t.Errorf("%s: %v", d, err)
			continue
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		if !fi.IsDir() || fi.Mode().Perm() != 0o755 || st == nil || int(st.Uid) != uid {
			t.Errorf("%s: mode %v, uid %v; want a directory 0755 of uid %d", d, fi.Mode(), st.Uid, uid)
		}
	}
}

// TestARunLeavesOnlyWhatItKept: the run's empty directories, which belong to
// the sandbox user, are handed to the key's next run or removed when its
// handle closes, and then the session's context and runs directories when
// empty and no run of the session is open; one a command wrote into stays.
func TestARunLeavesOnlyWhatItKept(t *testing.T) {
	t.Parallel()
	dir := computetest.Dir(t)
	p := newProviderWith(t, bwrap.Config{Dir: dir})
	k := compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
	key := filepath.Join(dir, "t/w/a/o")
	for _, tc := range []struct {
		run, command string
		left         []string
		session      []string // what sessions/s holds after the run
		spare        []string // the key's spare run directory after the run
		spareSession []string // the key's spare session directory after the run
	}{
		// Its directories, untouched, are the key's spares (adopted by the
		// next run of the key instead of creating its own).
		{"empty", "true", nil, nil, []string{"input", "output", "tmp"}, []string{"context", "runs"}},
		{"scratch", `echo x > "$TMPDIR/f"`, []string{"tmp"}, []string{"runs"}, nil, nil},
	} {
		sb, err := p.Open(t.Context(), compute.Spec{Key: k, SessionID: "s", RunID: tc.run})
		if err != nil {
			t.Fatal(err)
		}
		run(t, sb, tc.command, 0)
		if err := sb.Close(); err != nil {
			t.Fatal(err)
		}
		if left := names(t, filepath.Join(key, "sessions/s/runs", tc.run)); !slices.Equal(left, tc.left) {
			t.Errorf("run %s left %v, want %v", tc.run, left, tc.left)
		}
		for rel, want := range map[string][]string{"sessions/s": tc.session, "spare": tc.spare,
			"spare-session": tc.spareSession} {
			if got := names(t, filepath.Join(key, rel)); !slices.Equal(got, want) {
				t.Errorf("after run %s %s holds %v, want %v", tc.run, rel, got, want)
			}
		}
	}

	// Two runs of a session at once: the first to close leaves the other's
	// directories and the session's context; the last hands the session's
	// directory on.
	var both []compute.Sandbox
	for _, id := range []string{"x", "y"} {
		sb, err := p.Open(t.Context(), compute.Spec{Key: k, SessionID: "s2", RunID: id})
		if err != nil {
			t.Fatal(err)
		}
		run(t, sb, "true", 0)
		both = append(both, sb)
	}
	if err := both[0].Close(); err != nil {
		t.Fatal(err)
	}
	run(t, both[1], `test -d /sessions/s2/context && test -d "$TMPDIR"`, 0)
	if err := both[1].Close(); err != nil {
		t.Fatal(err)
	}
	if got, spare := names(t, filepath.Join(key, "sessions/s2")), names(t, filepath.Join(key, "spare-session")); got != nil ||
		!slices.Equal(spare, []string{"context", "runs"}) {
		t.Errorf("the session's last run closed; the session holds %v, the spare session %v", got, spare)
	}

	// Runs each of a session of its own (a create without a session) leave
	// the key no more than its spares.
	for i := range 20 {
		sb, err := p.Open(t.Context(), compute.Spec{Key: k, SessionID: "one-" + strconv.Itoa(i), RunID: "r"})
		if err != nil {
			t.Fatal(err)
		}
		run(t, sb, "true", 0)
		if err := sb.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := names(t, filepath.Join(key, "sessions")), []string{"s"}; !slices.Equal(got, want) {
		t.Errorf("after twenty one-run sessions the key's sessions are %v, want %v", got, want)
	}
}

// TestASessionInUseByAnotherProcessStays: two providers sharing a directory
// stand for two executor processes (a partition handed over while its old
// owner's run still ends). A run of the session closing in one leaves the
// session's directory to the other's open run, whose context stays where
// its host path says; the last run to close tidies it.
func TestASessionInUseByAnotherProcessStays(t *testing.T) {
	t.Parallel()
	dir := computetest.Dir(t)
	p1, p2 := newProviderWith(t, bwrap.Config{Dir: dir}), newProviderWith(t, bwrap.Config{Dir: dir})
	k := compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
	key := filepath.Join(dir, "t/w/a/o")
	open := func(p compute.Provider, run string) compute.Sandbox {
		sb, err := p.Open(t.Context(), compute.Spec{Key: k, SessionID: "s", RunID: run})
		if err != nil {
			t.Fatal(err)
		}
		return sb
	}
	old := open(p1, "old")
	run(t, old, "true", 0)
	next := open(p2, "next")
	run(t, next, "true", 0)
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	run(t, old, `echo kept > /sessions/s/context/note`, 0)
	if got := hostFile(t, filepath.Join(key, "sessions/s/context/note")); got != "kept\n" {
		t.Errorf("the open run's context note on the host: %q", got)
	}
	if err := os.Remove(filepath.Join(key, "sessions/s/context/note")); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if got, spare := names(t, filepath.Join(key, "sessions/s")), names(t, filepath.Join(key, "spare-session")); got != nil ||
		!slices.Equal(spare, []string{"context", "runs"}) {
		t.Errorf("the session's last run closed; the session holds %v, the spare session %v", got, spare)
	}
}

// names lists dir's entries (none when it does not exist).
func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestEtcFilesAreReadOnlyCopies: the files of /etc a command sees are the
// host's, read-only, with or without a network, and the descriptors they
// were copied from are not left open in the command.
func TestEtcFilesAreReadOnlyCopies(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	isolated := open(t, p, compute.Spec{})
	networked := open(t, p, compute.Spec{Network: true,
		Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "net"}})
	for _, sb := range []compute.Sandbox{isolated, networked} {
		for _, f := range []string{"/etc/passwd", "/etc/hosts", "/etc/ld.so.cache"} {
			if got := run(t, sb, "cat "+f, 0); got != hostFile(t, f) {
				t.Errorf("%s in the sandbox differs from the host's", f)
			}
			run(t, sb, "test -w "+f+" || [ \"$(stat -c %a "+f+")\" != 444 ] || ! : >> "+f, 1)
		}
		// The shell reads its script from no file: it lists 0, 1, 2 and the
		// directory ls reads.
		if got := strings.Fields(run(t, sb, "ls /proc/self/fd", 0)); len(got) != 4 {
			t.Errorf("descriptors open in a command: %v, want 0, 1, 2 and ls's own", got)
		}
	}
	if got := run(t, isolated, "getent hosts localhost", 0); !strings.Contains(got, "localhost") {
		t.Errorf("getent hosts localhost = %q: name resolution does not read the copies", got)
	}
}

// TestInheritedDescriptorsStayOut: a descriptor this process holds open
// without close-on-exec (as one inherited from whatever started it) is not
// open in a command. Not parallel: the descriptor would reach the commands
// of tests that run meanwhile.
func TestInheritedDescriptorsStayOut(t *testing.T) {
	// Above the descriptors a command's extra files take; F_DUPFD leaves
	// close-on-exec unset.
	fd, err := unix.FcntlInt(2, unix.F_DUPFD, 200)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Close(fd) }()
	sb := open(t, newProvider(t), compute.Spec{})
	if got := strings.Fields(run(t, sb, "ls /proc/self/fd", 0)); slices.Contains(got, strconv.Itoa(fd)) {
		t.Errorf("descriptor %d is open in the command (%v)", fd, got)
	}
}
