package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// hostLaunch runs the command with /bin/sh -c in its cwd's host directory,
// as owner when set (the local provider's launcher, plus bwrap's switch of
// user).
func hostLaunch(owner *Owner) Launcher {
	return func(l Launch) (*exec.Cmd, error) {
		dir, err := l.Layout.HostPath(l.Cwd)
		if err != nil {
			return nil, err
		}
		cmd := &exec.Cmd{Path: shell, Args: []string{shell, "-c", l.Command}, Dir: dir, Env: Env(dir, dir, nil)}
		if owner != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
				Uid: uint32(owner.UID), Gid: uint32(owner.GID), Groups: []uint32{}}} //nolint:gosec // test ids
		}
		return cmd, nil
	}
}

// heldProvider is a host-path provider using mechanism whose commands are
// held by h, run as owner when set.
func heldProvider(t *testing.T, mechanism string, h hold, owner *Owner) *Provider {
	t.Helper()
	dir := computetest.Dir(t) // the owner passes through its parent
	opts := []Option{WithHostPaths()}
	if owner != nil {
		opts = append(opts, WithOwner(*owner))
	}
	p, err := NewProvider("test", dir, hostLaunch(owner), LimitConfig{Mechanism: mechanism}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	p.limiter.hold = h
	return p
}

// TestAsRootCommandsAreHeldByPtrace: an executor with CAP_SYS_PTRACE
// (root here) holds its own-user commands by ptrace; commands as another
// user only with CAP_SYS_RESOURCE too, which it needs to limit them.
func TestAsRootCommandsAreHeldByPtrace(t *testing.T) {
	t.Parallel()
	if !hasCap(unix.CAP_SYS_PTRACE) {
		if h, why := chooseHold(nil); h != holdGate || why != "no CAP_SYS_PTRACE" {
			t.Errorf("without CAP_SYS_PTRACE: hold %s (%s), want the gate and why", h, why)
		}
		t.Skip("no CAP_SYS_PTRACE")
	}
	if h, why := chooseHold(nil); h != holdTrace {
		t.Errorf("hold %s (%s), want ptrace", h, why)
	}
	other := &Owner{UID: 65200, GID: 65200}
	h, why := chooseHold(other)
	if hasCap(unix.CAP_SYS_RESOURCE) && h != holdTrace {
		t.Errorf("another user, with CAP_SYS_RESOURCE: hold %s (%s), want ptrace", h, why)
	}
	if !hasCap(unix.CAP_SYS_RESOURCE) && (h != holdGate || !strings.Contains(why, "operation not permitted")) {
		t.Errorf("another user, without CAP_SYS_RESOURCE: hold %s (%s), want the gate since prlimit is refused", h, why)
	}
}

// TestEitherHoldPlacesAndLimitsTheCommandBeforeItRuns: with the gate and
// with ptrace, a command's first instruction runs in its box's cgroup (with
// cgroups) and under the file-size limit (and without cgroups the data
// limit); a file past the workspace limit kills the command with SIGXFSZ,
// reported as the workspace limit "rlimit, one file"; exit codes and
// output pass through; a command as another user is held and limited too.
func TestEitherHoldPlacesAndLimitsTheCommandBeforeItRuns(t *testing.T) {
	t.Parallel()
	owners := []*Owner{nil}
	if os.Geteuid() == 0 {
		owners = append(owners, &Owner{UID: 65200, GID: 65200})
	}
	const ws, mem = 4 << 20, 256 << 20
	for _, mech := range []string{MechanismAuto, MechanismRlimit} {
		for _, owner := range owners {
			holds := []hold{holdGate}
			if h, why := chooseHold(owner); h == holdTrace {
				holds = append(holds, holdTrace)
			} else {
				t.Logf("owner %v: no ptrace here: %s", owner, why)
			}
			for _, h := range holds {
				p := heldProvider(t, mech, h, owner)
				name := p.Mechanism() + "/" + h.String()
				if owner != nil {
					name += "/uid " + strconv.Itoa(owner.UID)
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					b, err := p.Open(t.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a",
						OwnerID: "o"}, SessionID: "s", RunID: "r", Limits: compute.Limits{WorkspaceBytes: ws, MemoryBytes: mem}})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = b.Close() })
					var out bytes.Buffer
					res, err := b.Exec(t.Context(), compute.ExecRequest{Stdout: &out,
						Command: "exec 2>&1; id -u; ulimit -f; ulimit -d; cat /proc/self/cgroup; exit 7"})
					if err != nil || res.ExitCode != 7 {
						t.Fatalf("Exec = %+v, %v; output %q", res, err, out.String())
					}
					lines := strings.Split(out.String(), "\n")
					wantUID, wantData := strconv.Itoa(os.Geteuid()), "unlimited"
					if owner != nil {
						wantUID = strconv.Itoa(owner.UID)
					}
					if p.limiter.h == nil {
						wantData = strconv.Itoa(mem / 1024)
					}
					if len(lines) < 3 || lines[0] != wantUID || lines[1] != strconv.Itoa(ws/512) || lines[2] != wantData {
						t.Errorf("uid, ulimit -f, ulimit -d = %q, want %s, %d, %s", lines, wantUID, ws/512, wantData)
					}
					if p.limiter.h != nil && !strings.Contains(out.String(), ".box") {
						t.Errorf("the command ran outside its box's cgroup: %q", out.String())
					}
					_, err = b.Exec(t.Context(), compute.ExecRequest{Command: "exec head -c 8388608 /dev/zero > big"})
					var le *compute.LimitError
					if !errors.As(err, &le) || le.Resource != compute.ResourceWorkspace || le.Mechanism != "rlimit, one file" {
						t.Errorf("a file past the workspace limit: %v, want the workspace LimitError by rlimit", err)
					}
				})
			}
		}
	}
}

// TestManyCommandsHeldAtOnce: commands started together from many
// goroutines, each held, placed and released on its own thread, all run
// once, with their own output and exit code, in the box's cgroup.
func TestManyCommandsHeldAtOnce(t *testing.T) {
	t.Parallel()
	h, why := chooseHold(nil)
	if h != holdTrace {
		t.Skipf("no ptrace here: %s", why)
	}
	p := heldProvider(t, MechanismAuto, holdTrace, nil)
	inBox := "" // with cgroups, a command outside its box's group prints nothing
	if p.limiter.h != nil {
		inBox = "grep -q .box /proc/self/cgroup && "
	}
	const boxes, each = 16, 8
	errs := make(chan error, boxes*each)
	var wg sync.WaitGroup
	for i := range boxes {
		b, err := p.Open(t.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w" + strconv.Itoa(i),
			AgentID: "a", OwnerID: "o"}, SessionID: "s", RunID: "r"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		for j := range each {
			wg.Go(func() {
				var out bytes.Buffer
				want := strconv.Itoa(i*each + j)
				res, err := b.Exec(t.Context(), compute.ExecRequest{Stdout: &out,
					Command: inBox + "echo " + want + "; exit " + strconv.Itoa(j)})
				if err != nil || res.ExitCode != j || out.String() != want+"\n" {
					errs <- fmt.Errorf("command %s: %+v, error %q, output %q", want, res, fmt.Sprint(err), out.String())
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestALaunchersFilesBeginAtFirstFD: a launcher that hands its command an
// extra file finds it on Launch.FirstFD, whichever hold starts the command
// (the gate's pipe comes first), and a shell can name it.
func TestALaunchersFilesBeginAtFirstFD(t *testing.T) {
	t.Parallel()
	holds := []hold{holdGate}
	if h, _ := chooseHold(nil); h == holdTrace {
		holds = append(holds, holdTrace)
	}
	for _, h := range holds {
		t.Run(h.String(), func(t *testing.T) {
			t.Parallel()
			launch := hostLaunch(nil)
			p, err := NewProvider("test", computetest.Dir(t), func(l Launch) (*exec.Cmd, error) {
				if l.FirstFD < 3 || l.FirstFD > 9 {
					return nil, fmt.Errorf("FirstFD %d: a shell cannot name it", l.FirstFD)
				}
				r, w, err := os.Pipe()
				if err != nil {
					return nil, err
				}
				defer func() { _ = w.Close() }()
				if _, err := w.WriteString("handed over\n"); err != nil {
					return nil, err
				}
				l.Command = fmt.Sprintf("cat <&%d", l.FirstFD)
				cmd, err := launch(l)
				if err != nil {
					_ = r.Close()
					return nil, err
				}
				cmd.ExtraFiles = []*os.File{r}
				return cmd, nil
			}, LimitConfig{}, WithHostPaths())
			if err != nil {
				t.Fatal(err)
			}
			p.limiter.hold = h
			b, err := p.Open(t.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a",
				OwnerID: "o"}, SessionID: "s", RunID: "r"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			var out bytes.Buffer
			res, err := b.Exec(t.Context(), compute.ExecRequest{Command: "replaced", Stdout: &out, Stderr: &out})
			if err != nil || res.ExitCode != 0 || out.String() != "handed over\n" {
				t.Errorf("Exec = %+v, %v; output %q, want the launcher's file read", res, err, out.String())
			}
		})
	}
}
