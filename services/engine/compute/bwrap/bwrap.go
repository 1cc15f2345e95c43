package bwrap

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

// installHint ends every ErrUnavailable of this package.
const installHint = "install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces " +
	"for the sandbox user (sysctl user.max_user_namespaces > 0; in a container, a seccomp/AppArmor " +
	"profile that permits unshare)"

// netHint ends the error of a networked sandbox that cannot be set up.
const netHint = "networked sandboxes need pasta (apt-get install -y passt), iproute2's ip, util-linux's nsenter, and " +
	"/dev/net/tun usable by the sandbox user (mode 0666, the default)"

// probeTimeout bounds New's trial sandboxes. Setting one up takes ~10 ms
// (~50 ms with pasta); ten seconds only guards against a wedged machine.
const probeTimeout = 10 * time.Second

// Provider is the bwrap compute provider. It implements compute.Provider.
type Provider struct {
	p       *sandbox.Provider
	binary  string
	system  []string // bwrap arguments binding the read-only system
	etc     []string // the files of defaultEtc, copied in (etcCopies)
	extra   []string // bwrap arguments binding Config.ReadOnlyPaths
	id      identity
	filter  []byte // the compiled seccomp program
	pasta   string
	ip      string
	nsenter string
	netErr  error // why networked sandboxes cannot run here; nil if they can
}

var _ compute.Provider = (*Provider)(nil)

// New checks that bwrap exists and can create its namespaces here as the
// sandbox user (by running a trial sandbox); otherwise it returns an error
// wrapping compute.ErrUnavailable that says what to install or allow. When
// networked sandboxes cannot run (no pasta), New still succeeds: Exec in a
// networked sandbox then fails with ErrUnavailable.
func New(cfg Config) (*Provider, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("bwrap compute provider: %w: %s not found: %s", compute.ErrUnavailable, cfg.Binary, installHint)
	}
	pr := &Provider{binary: bin, extra: extraArgs(cfg.ReadOnlyPaths), id: newIdentity(cfg)}
	pr.system, pr.etc = systemArgs()
	if err := pr.id.reachable(cfg.Dir); err != nil {
		return nil, err
	}
	if pr.filter, err = filterProgram(); err != nil {
		return nil, fmt.Errorf("bwrap compute provider: %w: %w", compute.ErrUnavailable, err)
	}
	if err := pr.probe(); err != nil {
		return nil, err
	}
	pr.netErr = pr.probeNetwork(cfg)
	if pr.p, err = sandbox.NewProvider("bwrap", cfg.Dir, pr.launch, cfg.limits(), pr.id.options()...); err != nil {
		return nil, err
	}
	log := cfg.Logger.With(zap.String("bwrap", bin), zap.String("dir", pr.p.Base()), zap.Int("sandbox_uid", pr.id.uid),
		zap.String("limits", pr.p.Mechanism()), zap.String("hold", pr.p.Hold()))
	if pr.netErr != nil {
		log.Warn("bwrap compute provider: networked sandboxes unavailable", zap.Error(pr.netErr))
	}
	if !ownFilesystem(pr.p.Base()) {
		log.Warn("bwrap compute provider: the compute directory is not a filesystem of its own, so a sandbox can " +
			"read its host path in /proc/self/mountinfo; mount a volume there to hide it")
	}
	log.Info("bwrap compute provider ready")
	return pr, nil
}

// probe runs `sh -c :` in a sandbox set up like a run's, minus its
// directories.
func (p *Provider) probe() error {
	x := p.openExtraFiles(3)
	cmd, err := p.command(p.probeArgs(false, x), x)
	if err != nil {
		return fmt.Errorf("bwrap compute provider: %w: %w", compute.ErrUnavailable, err)
	}
	if err := run(cmd); err != nil {
		return fmt.Errorf("bwrap compute provider: %w: %s cannot create a sandbox here as uid %d (%w): %s",
			compute.ErrUnavailable, p.binary, p.id.uid, err, installHint)
	}
	return nil
}

// probeNetwork finds pasta, ip and nsenter, and runs a trial networked
// sandbox: a namespace, and a command in it.
func (p *Provider) probeNetwork(cfg Config) error {
	var err error
	for _, t := range []struct {
		name string
		path *string
	}{{cfg.Pasta, &p.pasta}, {cfg.IP, &p.ip}, {cfg.Nsenter, &p.nsenter}} {
		if *t.path, err = exec.LookPath(t.name); err != nil {
			return fmt.Errorf("%w: %s not found: %s", compute.ErrUnavailable, t.name, netHint)
		}
	}
	if err := p.trialNamespace(); err != nil {
		return fmt.Errorf("%w: a networked sandbox cannot start here as uid %d (%w): %s", compute.ErrUnavailable, p.id.uid, err, netHint)
	}
	return nil
}

// trialNamespace starts a namespace as a box would, runs `sh -c :` in it
// and ends it.
func (p *Provider) trialNamespace() error {
	c, err := p.startNamespace(nil, hostAddrs())(3)
	if err != nil {
		return err
	}
	defer c.Release()
	if err := c.Cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = c.Cmd.Wait()
		close(exited)
	}()
	defer func() {
		c.Stop()
		select {
		case <-exited:
		case <-time.After(probeTimeout):
			_ = c.Cmd.Process.Kill()
			<-exited
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if err := c.Ready(ctx, c.Cmd.Process.Pid); err != nil {
		return err
	}
	ns, err := c.State.(*namespace).dup()
	if err != nil {
		return err
	}
	cmd, err := p.joined(3, ns, func(x extraFiles) []string { return p.probeArgs(true, x) })
	if err != nil {
		return err
	}
	return run(cmd)
}

// run runs a probe's command; its error carries the command's stderr.
func run(cmd *exec.Cmd) error {
	defer closeAll(cmd.ExtraFiles) // this process's copies
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	defer stop()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// closeAll closes the files that are not nil.
func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			_ = f.Close()
		}
	}
}

// Name returns "bwrap".
func (p *Provider) Name() string { return p.p.Name() }

// Open checks spec and returns the run's handle; the key's workspace and
// the run's directories are created when the handle first needs them.
func (p *Provider) Open(ctx context.Context, spec compute.Spec) (compute.Sandbox, error) {
	b, err := p.p.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Destroy kills every command of key's open handles and removes its
// directory.
func (p *Provider) Destroy(ctx context.Context, key compute.Key) error {
	return p.p.Destroy(ctx, key)
}

// Close removes the cgroups the provider keeps for its next sandboxes;
// call it once no handle is used any more.
func (p *Provider) Close() error { return p.p.Close() }

// Mechanism names what enforces the sandboxes' memory and pids limits:
// "cgroup v2", "cgroup v1" or "rlimit (<why cgroups are not used>)".
func (p *Provider) Mechanism() string { return p.p.Mechanism() }

// ownFilesystem reports whether dir is the root of a mounted filesystem (its
// device differs from its parent's). Bind mounts of what lies below it then
// show only the path below dir in /proc/self/mountinfo, not dir's host path.
func ownFilesystem(dir string) bool {
	var st, parent syscall.Stat_t
	if syscall.Stat(dir, &st) != nil || syscall.Stat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev != parent.Dev
}
