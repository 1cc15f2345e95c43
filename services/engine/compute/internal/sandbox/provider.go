package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// Provider keeps each sandbox key's directories below a base directory and
// runs commands through a Launcher. The local and bwrap providers wrap it.
type Provider struct {
	name    string
	base    string
	launch  Launcher
	limiter *limiter
	owner   *Owner // nil: processes run as the executor's user
	// hostPaths: commands see host paths (WithHostPaths).
	hostPaths bool

	mu     sync.Mutex
	boxes  map[string]map[*Box]struct{} // open handles by key directory
	meters map[string]*usageMeter       // by key directory, while it has open handles
}

// NewProvider creates dir (mode 0700: sandboxes are not other host users'
// business; 0710 for the owner's group WithOwner) and returns a provider
// named name that limits its sandboxes as limits says.
func NewProvider(name, dir string, launch Launcher, limits LimitConfig, opts ...Option) (*Provider, error) {
	lim, err := newLimiter(limits)
	if err != nil {
		return nil, fmt.Errorf("%s compute provider: %w", name, err)
	}
	if err := closeInheritedOnExec(); err != nil {
		return nil, fmt.Errorf("%s compute provider: %w", name, err)
	}
	base, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s compute provider: %w", name, err)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("%s compute provider: %w", name, err)
	}
	p := &Provider{name: name, base: base, launch: launch, limiter: lim, boxes: map[string]map[*Box]struct{}{},
		meters: map[string]*usageMeter{}}
	for _, o := range opts {
		o(p)
	}
	if err := p.own(); err != nil {
		return nil, err
	}
	lim.hold, lim.holdWhy = chooseHold(p.owner)
	return p, nil
}

// Mechanism names what enforces the memory and pids limits: "cgroup v2",
// "cgroup v1" or "rlimit (<why cgroups are not used>)".
func (p *Provider) Mechanism() string { return p.limiter.Mechanism() }

// Hold names how a command is held until it is placed and limited:
// "ptrace" or "gate (<why not ptrace>)".
func (p *Provider) Hold() string { return p.limiter.Hold() }

// Name returns the provider's name.
func (p *Provider) Name() string { return p.name }

// Base returns the absolute base directory.
func (p *Provider) Base() string { return p.base }

// Open checks spec and returns the run's handle. It creates nothing: the
// key's workspace and the run's directories are created when the handle
// first needs them (a write creates the directory it writes into, a command
// all of them), and the limits' group with the first command.
func (p *Provider) Open(ctx context.Context, spec compute.Spec) (*Box, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkEnv(spec.Env); err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	if err := checkOptions(spec); err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	if err := checkMounts(spec.ReadOnlyMounts); err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	l, err := newLayout(p.base, spec)
	if err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	lim, err := p.limiter.open(spec.Limits)
	if err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	l.owner = p.owner
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.boxes[l.keyDir] == nil {
		p.boxes[l.keyDir] = map[*Box]struct{}{}
		p.meters[l.keyDir] = newUsageMeter()
	}
	b := &Box{layout: l, spec: spec, launch: p.launch, release: p.release, create: p.create,
		hostPaths: p.hostPaths, limits: lim, meter: p.meters[l.keyDir], running: map[int]struct{}{}}
	p.boxes[l.keyDir][b] = struct{}{}
	return b, nil
}

// Close removes the cgroups kept for the next sandboxes (groupPool). Call
// it once no handle is used any more. The provider keeps working after it,
// without keeping groups: a handle closed later removes its own.
func (p *Provider) Close() error {
	p.limiter.pool.close()
	return nil
}

// Destroy kills and closes every open handle of key and removes its
// directory. Symlinks inside are removed, never followed.
func (p *Provider) Destroy(ctx context.Context, key compute.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := KeyDir(p.base, key)
	if err != nil {
		return fmt.Errorf("destroy sandbox: %w", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for b := range p.boxes[dir] {
		b.shut(true)
	}
	delete(p.boxes, dir)
	delete(p.meters, dir)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("destroy sandbox: %w", err)
	}
	return nil
}

// create creates the mounts ms of b's layout unless b is closed; under
// the provider's lock, so that a Destroy either closes b first or removes
// what this created.
func (p *Provider) create(b *Box, ms []Mount) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return errClosed
	}
	return b.layout.ensure(ms...)
}

// release forgets closed handle b and, when it was its run's last open
// handle here, tidies the run's directories (Layout.tidy) under the
// provider's lock, as Destroy and create are, then, when no other handle of
// the session is open here, the session's directory (Layout.tidySession)
// after it: that may wait for a lock.
func (p *Provider) release(b *Box) {
	if p.releaseRun(b) {
		b.layout.tidySession()
	}
}

// releaseRun is release's part under the provider's lock; it reports
// whether the session's directory is left to tidy.
func (p *Provider) releaseRun(b *Box) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	open := p.boxes[b.layout.keyDir]
	delete(open, b)
	if len(open) == 0 {
		delete(p.boxes, b.layout.keyDir)
		delete(p.meters, b.layout.keyDir)
	}
	for other := range open {
		if other.layout.runRel == b.layout.runRel {
			b.layout.letGo() // another handle of the run still uses them
			return false
		}
	}
	b.layout.tidy() // a destroyed key has no directory left: nothing to do
	for other := range open {
		if other.layout.sessRel == b.layout.sessRel {
			return false // its last handle tidies the session
		}
	}
	return true
}

// Env is the environment of a sandboxed process: a fixed allow-list, then
// extra (Spec.Env), whose entries override earlier ones of the same name.
// home and tmp are /workspace and the run's tmp as the process sees them.
func Env(home, tmp string, extra []string) []string {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8"}
	return append(env, extra...)
}

// checkEnv refuses Spec.Env entries that are not NAME=value.
func checkEnv(env []string) error {
	var errs []error
	for i, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.ContainsRune(kv, 0) {
			errs = append(errs, fmt.Errorf("env[%d] is not NAME=value", i))
		}
	}
	return errors.Join(errs...)
}
