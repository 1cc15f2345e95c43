package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// companions launches commands on the host whose networked ones use a
// companion: a shell that writes its pid to pid-<n> in dir, says it is
// ready, waits for its input to end and then writes stopped-<n>. A
// command learns its companion's n from $COMPANION.
type companions struct {
	dir      string
	mu       sync.Mutex
	key      string
	starts   atomic.Int32
	released atomic.Int32
}

func (cs *companions) setKey(k string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.key = k
}

func (cs *companions) launch(l Launch) (*exec.Cmd, error) {
	cmd, err := hostLaunch(nil)(l)
	if err != nil || !l.Network {
		return cmd, err
	}
	cs.mu.Lock()
	key := cs.key
	cs.mu.Unlock()
	var n int
	if err := l.Companion(key, cs.start, func(c *Companion) error {
		n = c.State.(int)
		return nil
	}); err != nil {
		return nil, err
	}
	cmd.Env = append(cmd.Env, "COMPANION="+strconv.Itoa(n))
	return cmd, nil
}

func (cs *companions) start(int) (*Companion, error) {
	n := int(cs.starts.Add(1))
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	script := fmt.Sprintf(`echo $$ > pid-%d; echo ready; read -r _ || :; echo bye > stopped-%d`, n, n)
	cmd := &exec.Cmd{Path: shell, Args: []string{shell, "-c", script}, Dir: cs.dir, Stdin: inR, Stdout: outW}
	var stopOnce, releaseOnce sync.Once
	stop := func() { stopOnce.Do(func() { _ = inW.Close() }) }
	return &Companion{Cmd: cmd, State: n, Stop: stop,
		Ready: func(ctx context.Context, _ int) error {
			_, _ = inR.Close(), outW.Close()
			line := make(chan string, 1)
			go func() {
				s, _ := bufio.NewReader(outR).ReadString('\n')
				line <- s
			}()
			select {
			case s := <-line:
				if s != "ready\n" {
					return fmt.Errorf("companion said %q", s)
				}
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
		Release: func() {
			releaseOnce.Do(func() {
				stop()
				_, _ = inR.Close(), outW.Close()
				_ = outR.Close()
				cs.released.Add(1)
			})
		},
	}, nil
}

// pid is companion n's process ID.
func (cs *companions) pid(t *testing.T, n int) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(cs.dir, "pid-"+strconv.Itoa(n)))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// stopped reports whether companion n ended as asked (not killed).
func (cs *companions) stopped(n int) bool {
	_, err := os.Stat(filepath.Join(cs.dir, "stopped-"+strconv.Itoa(n)))
	return err == nil
}

// newCompanionProvider is a provider whose networked commands use
// companions (see companions); its commands and companions are held as it
// chose, or by the gate when gate is set.
func newCompanionProvider(t *testing.T, gate bool) (*Provider, *companions) {
	t.Helper()
	cs := &companions{dir: t.TempDir(), key: "a"}
	// After the boxes closed (their cleanups run first) and before the
	// directory goes: a companion asked to end writes its file as it ends.
	t.Cleanup(func() {
		eventually.Succeeds(t, 10*time.Second, "every companion ended", func() error {
			if started, released := cs.starts.Load(), cs.released.Load(); released != started {
				return fmt.Errorf("%d of %d companions released", released, started)
			}
			return nil
		})
	})
	p, err := NewProvider("test", computetest.Dir(t), cs.launch, LimitConfig{}, WithHostPaths())
	if err != nil {
		t.Fatal(err)
	}
	if gate {
		p.limiter.hold = holdGate
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, cs
}

func openBox(t *testing.T, p *Provider, owner string, network bool) *Box {
	t.Helper()
	b, err := p.Open(t.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: owner},
		SessionID: "s", RunID: "r", Network: network})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func execOut(t *testing.T, b *Box, command string) string {
	t.Helper()
	var out bytes.Buffer
	res, err := b.Exec(t.Context(), compute.ExecRequest{Command: command, Stdout: &out, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%s: %+v, %v", command, res, err)
	}
	return strings.TrimSpace(out.String())
}

// alive reports whether process pid exists (a zombie counts as gone).
func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(data), ") ")
	return !strings.HasPrefix(after, "Z")
}

// groupOf is the group in /proc/<pid>/cgroup's text of the hierarchy that
// limits memory: the unified one (v2) or memory's (v1).
func groupOf(t *testing.T, cgroups string, v2 bool) string {
	t.Helper()
	for line := range strings.SplitSeq(cgroups, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (v2 && parts[0] == "0" || !v2 && strings.Contains(parts[1], "memory")) {
			return parts[2]
		}
	}
	t.Fatalf("no memory group in %q", cgroups)
	return ""
}

// TestACompanionServesEveryCommandOfItsBox: a box's networked commands
// share one companion, started with the first of them, and another box
// has its own; a companion runs in a subgroup of its box's group, as a
// command does, held until it is placed by either hold, and Kill, which
// ends the commands, leaves it.
func TestACompanionServesEveryCommandOfItsBox(t *testing.T) {
	t.Parallel()
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%v", gate), func(t *testing.T) {
			t.Parallel()
			p, cs := newCompanionProvider(t, gate)
			aCompanionServesEveryCommandOfItsBox(t, p, cs)
		})
	}
}

func aCompanionServesEveryCommandOfItsBox(t *testing.T, p *Provider, cs *companions) {
	b := openBox(t, p, "o", true)
	var cmdGroup string
	for range 3 {
		out := execOut(t, b, `echo "$COMPANION"; cat /proc/self/cgroup`)
		n, cgroups, _ := strings.Cut(out, "\n")
		if n != "1" {
			t.Fatalf("a command of the box used companion %s, want 1", n)
		}
		if p.limiter.h != nil {
			cmdGroup = groupOf(t, cgroups, p.limiter.h.mechanism() == "cgroup v2")
		}
	}
	if n := cs.starts.Load(); n != 1 {
		t.Errorf("three commands of a box started %d companions, want 1", n)
	}
	if p.limiter.h != nil {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(cs.pid(t, 1)) + "/cgroup")
		if err != nil {
			t.Fatal(err)
		}
		comp := groupOf(t, string(data), p.limiter.h.mechanism() == "cgroup v2")
		if path.Dir(comp) != path.Dir(cmdGroup) || comp == cmdGroup {
			t.Errorf("the companion is in group %s, want a subgroup of its box's group beside a command's (%s)", comp, cmdGroup)
		}
	}
	if err := b.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := execOut(t, b, `echo "$COMPANION"`); got != "1" {
		t.Errorf("after Kill a command used companion %s, want 1 still", got)
	}
	if other := openBox(t, p, "other", true); execOut(t, other, `echo "$COMPANION"`) != "2" {
		t.Error("another box shares the first box's companion")
	}
	if isolated := openBox(t, p, "isolated", false); execOut(t, isolated, `echo "${COMPANION:-none}"`) != "none" {
		t.Error("a box without a network has a companion")
	}
}

// TestACompanionThatEndedOrNoLongerFitsIsReplaced: a companion that died
// is started again for the next command; one whose key no longer matches
// is asked to end and replaced. Each is released once.
func TestACompanionThatEndedOrNoLongerFitsIsReplaced(t *testing.T) {
	t.Parallel()
	p, cs := newCompanionProvider(t, false)
	b := openBox(t, p, "o", true)
	execOut(t, b, "true")
	if err := syscall.Kill(cs.pid(t, 1), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually.Succeeds(t, 10*time.Second, "a command uses a new companion", func() error {
		if got := execOut(t, b, `echo "$COMPANION"`); got != "2" {
			return fmt.Errorf("a command used companion %s", got)
		}
		return nil
	})
	cs.setKey("b")
	if got := execOut(t, b, `echo "$COMPANION"`); got != "3" {
		t.Fatalf("a command under another key used companion %s, want 3", got)
	}
	eventually.Succeeds(t, 10*time.Second, "the replaced companion ended as asked", func() error {
		if !cs.stopped(2) || alive(cs.pid(t, 2)) {
			return errors.New("companion 2 runs on")
		}
		return nil
	})
	if cs.stopped(1) {
		t.Error("the killed companion says it was asked to end")
	}
	eventually.Succeeds(t, 10*time.Second, "the ended companions released", func() error {
		if n := cs.released.Load(); n != 2 {
			return fmt.Errorf("%d released", n)
		}
		return nil
	})
}

// TestClosingABoxEndsItsCompanion: Close asks the companion to end, and
// Destroy of the key kills it at once.
func TestClosingABoxEndsItsCompanion(t *testing.T) {
	t.Parallel()
	p, cs := newCompanionProvider(t, false)
	closed := openBox(t, p, "closed", true)
	execOut(t, closed, "true")
	destroyed := openBox(t, p, "destroyed", true)
	execOut(t, destroyed, "true")
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Destroy(t.Context(), compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "destroyed"}); err != nil {
		t.Fatal(err)
	}
	eventually.Succeeds(t, 10*time.Second, "both companions ended and released", func() error {
		for n := 1; n <= 2; n++ {
			if alive(cs.pid(t, n)) {
				return fmt.Errorf("companion %d runs on", n)
			}
		}
		if n := cs.released.Load(); n != 2 {
			return fmt.Errorf("%d released", n)
		}
		return nil
	})
	if !cs.stopped(1) {
		t.Error("the closed box's companion was not asked to end")
	}
	if cs.stopped(2) {
		t.Error("the destroyed box's companion was asked to end instead of killed")
	}
}
