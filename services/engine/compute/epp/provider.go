package epp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

// Provider is a compute.Provider whose sandboxes a plugin keeps. Each
// Open starts a plugin process for the run's handle (one process per run's
// sandbox session, never one per host); Close ends it.
type Provider struct {
	cfg  Config
	info initResult

	mu   sync.Mutex
	keys map[string]*keyLock // in-process: one Open or Destroy of a key at a time
	open map[string]map[*Sandbox]struct{}
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

var _ compute.Provider = (*Provider)(nil)

// New checks cfg and starts the plugin once (initialize, shutdown), so that
// a plugin that cannot start, speaks another protocol or lacks what xbot
// needs (sandbox.lifecycle, and exec.run or exec.stream) fails at start
// rather than at a run's first tool call. It first makes this process
// non-dumpable, so that no plugin (the same user) reads its environment or
// memory through /proc.
func New(ctx context.Context, cfg Config) (*Provider, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hideHost(cfg.Logger)
	s, err := openSession(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if !s.has(featLifecycle) || (!s.has(featExecRun) && !s.has(featExecStream)) {
		return nil, fmt.Errorf("provider %s: xbot needs the features %s and %s or %s: %w",
			cfg.ID, featLifecycle, featExecRun, featExecStream, ErrFeatureNotSupported)
	}
	return &Provider{cfg: cfg, info: s.info, keys: map[string]*keyLock{}, open: map[string]map[*Sandbox]struct{}{}}, nil
}

// Name returns the provider's id.
func (p *Provider) Name() string { return p.cfg.ID }

// Mechanism is what the plugin said enforces its limits (initialize's
// limits_mechanism; "" when it did not say).
func (p *Provider) Mechanism() string { return p.info.LimitsMechanism }

// Isolation is what the plugin said separates its sandboxes from the host
// (none, namespaces, vm, remote; "" when it did not say).
func (p *Provider) Isolation() string { return p.info.Isolation }

// Open starts a plugin process for the run and attaches it to the key's
// sandbox: the one spec.SandboxID names (gone: an error wrapping
// compute.ErrSandboxLost), else a running sandbox of the key, else a new
// one. The spec is checked as every provider checks it before any process
// starts.
func (p *Provider) Open(ctx context.Context, spec compute.Spec) (compute.Sandbox, error) {
	paths, err := sandbox.CheckSpec(spec)
	if err != nil {
		return nil, err
	}
	unlock := p.lock(keyID(spec.Key))
	defer unlock()
	s, err := openSession(ctx, &p.cfg)
	if err != nil {
		return nil, err
	}
	if len(spec.ReadOnlyMounts) > 0 && !s.features[featMounts] {
		s.close()
		return nil, &FeatureError{Provider: p.cfg.ID, Method: "RunScope.read_only_mounts", Feature: featMounts}
	}
	rec, err := p.attach(ctx, s, spec)
	if err != nil {
		s.close()
		return nil, err
	}
	b := newSandbox(p, s, rec.SandboxID, spec, paths)
	p.track(b.key, b)
	return b, nil
}

// Destroy kills every sandbox of key the plugin lists; the key's open
// handles are lost (their commands killed, their calls answering
// compute.ErrSandboxLost).
func (p *Provider) Destroy(ctx context.Context, key compute.Key) error {
	unlock := p.lock(keyID(key))
	defer unlock()
	p.loseAll(keyID(key))
	s, err := openSession(ctx, &p.cfg)
	if err != nil {
		return fmt.Errorf("destroy sandbox: %w", err)
	}
	defer s.close()
	recs, err := p.list(ctx, s, keyID(key))
	if err != nil {
		return fmt.Errorf("destroy sandbox: %w", err)
	}
	var errs []error
	for _, r := range recs {
		var out struct {
			Killed bool `json:"killed"`
		}
		errs = append(errs, s.call(ctx, MSandboxKill, idParams{SandboxID: r.SandboxID}, &out, 0))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("destroy sandbox: %w", err)
	}
	return nil
}

// lock serializes Open and Destroy of one key in this process.
func (p *Provider) lock(id string) func() {
	p.mu.Lock()
	l := p.keys[id]
	if l == nil {
		l = &keyLock{}
		p.keys[id] = l
	}
	l.refs++
	p.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		p.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(p.keys, id)
		}
		p.mu.Unlock()
	}
}

// keyID is the metadata value xbot_key: a digest of the sandbox key, so that
// the plugin learns no tenant or owner id and distinct keys never meet.
func keyID(k compute.Key) string {
	h := sha256.New()
	for _, part := range []string{k.TenantID, k.WorkspaceID, k.AgentID, k.OwnerID} {
		_, _ = fmt.Fprintf(h, "%d:%s", len(part), part) // a hash takes every write
	}
	return hex.EncodeToString(h.Sum(nil))
}
