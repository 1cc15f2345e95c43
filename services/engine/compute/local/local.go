package local

import (
	"context"
	"errors"
	"os/exec"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

// shell runs every command.
const shell = "/bin/sh"

// Config configures the local provider.
type Config struct {
	// Dir is the base directory of all sandboxes; created (mode 0700) if
	// missing. Required.
	Dir string
	// Logger receives the no-isolation warning. Required.
	Logger *zap.Logger
	// Limits and LimitMechanism are as in the bwrap provider's Config.
	Limits         compute.Limits
	LimitMechanism string
}

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("local compute provider: Dir is required"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("local compute provider: Logger is required"))
	}
	return errors.Join(errs...)
}

// Provider is the local compute provider. It implements compute.Provider.
type Provider struct {
	p *sandbox.Provider
}

var _ compute.Provider = (*Provider)(nil)

// New returns a local provider and logs, once, that it isolates nothing.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := sandbox.NewProvider("local", cfg.Dir, launch,
		sandbox.LimitConfig{Defaults: cfg.Limits, Mechanism: cfg.LimitMechanism}, sandbox.WithHostPaths())
	if err != nil {
		return nil, err
	}
	cfg.Logger.Warn("local compute provider: no isolation, development only", zap.String("dir", p.Base()),
		zap.String("limits", p.Mechanism()), zap.String("hold", p.Hold()))
	return &Provider{p: p}, nil
}

// Name returns "local".
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

// Close removes the cgroups the provider keeps for its next sandboxes;
// call it once no handle is used any more.
func (p *Provider) Close() error { return p.p.Close() }

// Destroy kills every command of key's open handles and removes its
// directory.
func (p *Provider) Destroy(ctx context.Context, key compute.Key) error {
	return p.p.Destroy(ctx, key)
}

// launch runs the command with /bin/sh -c in the host directory of its cwd,
// with the allow-listed environment only.
func launch(l sandbox.Launch) (*exec.Cmd, error) {
	paths := l.Layout.Paths()
	dir, err := l.Layout.HostPath(l.Cwd)
	if err != nil {
		return nil, err
	}
	home, err := l.Layout.HostPath(paths.Workspace)
	if err != nil {
		return nil, err
	}
	tmp, err := l.Layout.HostPath(paths.Tmp)
	if err != nil {
		return nil, err
	}
	return &exec.Cmd{
		Path: shell,
		Args: []string{shell, "-c", l.Command},
		Dir:  dir,
		Env:  sandbox.Env(home, tmp, l.Env),
	}, nil
}

// Mechanism names what enforces the sandboxes' memory and pids limits:
// "cgroup v2", "cgroup v1" or "rlimit (<why cgroups are not used>)".
func (p *Provider) Mechanism() string { return p.p.Mechanism() }
