package bwrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/compute"
	"github.com/xbot-runtime/xbot/services/compute/internal/sandbox"
)

// installHint ends every ErrUnavailable of this package.
const installHint = "install bubblewrap (apt-get install -y bubblewrap) and allow user namespaces " +
	"(sysctl kernel.unprivileged_userns_clone=1; in a container, a seccomp/AppArmor profile that permits unshare)"

// probeTimeout bounds New's trial sandbox. Setting one up takes ~10 ms; ten
// seconds only guards against a wedged machine.
const probeTimeout = 10 * time.Second

// Config configures the bwrap provider.
type Config struct {
	// Dir is the base directory of all sandboxes on the host; created (mode
	// 0700) if missing. Required.
	Dir string
	// Logger receives one line naming the bwrap binary. Required.
	Logger *zap.Logger
	// Binary is the bwrap executable, looked up in PATH. Default "bwrap".
	Binary string
	// ReadOnlyPaths are extra host paths (absolute) bound read-only at the
	// same path, e.g. /opt/toolchain or /etc/java-17-openjdk; missing ones
	// are skipped. Default none.
	ReadOnlyPaths []string
	// Limits are the limits of a sandbox whose Spec sets none; a zero field
	// takes the default (1 GiB memory, 256 processes, one core, 1 GiB of
	// disk).
	Limits compute.Limits
	// LimitMechanism enforces memory, pids and cpu: "auto" (default: cgroup
	// v2, else cgroup v1, else rlimits), "cgroup2", "cgroup1" or "rlimit".
	// Asking for a cgroup version that is not usable here fails New.
	LimitMechanism string
	// CgroupParent is a cgroup v2 directory delegated to the executor (no
	// process inside), below which each sandbox gets its group. Default:
	// the executor's own group.
	CgroupParent string
}

func (c Config) limits() sandbox.LimitConfig {
	return sandbox.LimitConfig{Defaults: c.Limits, Mechanism: c.LimitMechanism, CgroupParent: c.CgroupParent}
}

func (c *Config) setDefaults() {
	if c.Binary == "" {
		c.Binary = "bwrap"
	}
}

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("bwrap compute provider: Dir is required"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("bwrap compute provider: Logger is required"))
	}
	if err := c.limits().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("bwrap compute provider: %w", err))
	}
	for _, p := range c.ReadOnlyPaths {
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" || reserved(p) {
			errs = append(errs, fmt.Errorf("bwrap compute provider: ReadOnlyPaths: %q must be a clean absolute path "+
				"other than /, /workspace, /sessions, /proc, /dev, /tmp", p))
		}
	}
	return errors.Join(errs...)
}

func reserved(p string) bool {
	for _, r := range []string{"/workspace", "/sessions", "/proc", "/dev", "/tmp"} {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// Provider is the bwrap compute provider. It implements compute.Provider.
type Provider struct {
	p      *sandbox.Provider
	binary string
	system []string // bwrap arguments binding the read-only system
}

var _ compute.Provider = (*Provider)(nil)

// New checks that bwrap exists and can create its namespaces here (by
// running a trial sandbox); otherwise it returns an error wrapping
// compute.ErrUnavailable that says what to install or allow.
func New(cfg Config) (*Provider, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("bwrap compute provider: %w: %s not found: %s", compute.ErrUnavailable, cfg.Binary, installHint)
	}
	pr := &Provider{binary: bin, system: systemArgs(cfg.ReadOnlyPaths)}
	if err := pr.probe(); err != nil {
		return nil, err
	}
	if pr.p, err = sandbox.NewProvider("bwrap", cfg.Dir, pr.launch, cfg.limits()); err != nil {
		return nil, err
	}
	cfg.Logger.Info("bwrap compute provider ready", zap.String("bwrap", bin), zap.String("dir", pr.p.Base()),
		zap.String("limits", pr.p.Mechanism()))
	return pr, nil
}

// probe runs `sh -c :` in a sandbox set up like a run's, minus its
// directories.
func (p *Provider) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	args := append(p.base(false), "--remount-ro", "/", "--clearenv", "--", shell, "-c", ":")
	cmd := exec.CommandContext(ctx, p.binary, args...)
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bwrap compute provider: %w: %s cannot create a sandbox here (%w: %s): %s",
			compute.ErrUnavailable, p.binary, err, strings.TrimSpace(stderr.String()), installHint)
	}
	return nil
}

// Name returns "bwrap".
func (p *Provider) Name() string { return p.p.Name() }

// Open creates the key's workspace and the run's directories if missing and
// returns the run's handle.
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

// Mechanism names what enforces the sandboxes' memory and pids limits:
// "cgroup v2", "cgroup v1" or "rlimit (<why cgroups are not used>)".
func (p *Provider) Mechanism() string { return p.p.Mechanism() }
