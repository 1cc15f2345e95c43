package capacity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// Defaults: 8 sandboxes per tenant let a tenant run a handful of agents
// with parallel sub-runs; 64 in total keeps one executor's host (memory 1
// GiB each by default) from being oversubscribed; 30 s of waiting rides out
// a burst without leaving a run stuck behind a long one.
const (
	DefaultPerTenant = 8
	DefaultTotal     = 64
	DefaultWait      = 30 * time.Second
)

// ErrFull is wrapped by every *Error.
var ErrFull = errors.New("too many sandboxes are running")

// Error reports an Open that found no free slot within its wait.
type Error struct {
	// Scope is "tenant" or "total".
	Scope string
	// Limit is the cap that was full.
	Limit int
	// Waited is how long Open waited.
	Waited time.Duration
}

func (e *Error) Error() string {
	who := "this executor"
	if e.Scope == "tenant" {
		who = "this tenant"
	}
	return fmt.Sprintf("all %d sandboxes %s may run at once are in use; none was freed within %s",
		e.Limit, who, e.Waited.Round(time.Millisecond))
}

// Unwrap returns ErrFull.
func (e *Error) Unwrap() error { return ErrFull }

// Config configures a capped provider.
type Config struct {
	// Provider is the provider being capped. Required.
	Provider compute.Provider
	// PerTenant bounds one tenant's open sandboxes. Default DefaultPerTenant.
	PerTenant int
	// Total bounds all open sandboxes. Default DefaultTotal.
	Total int
	// Wait bounds how long Open waits for a slot. Default DefaultWait.
	Wait time.Duration
}

func (c *Config) setDefaults() {
	if c.PerTenant == 0 {
		c.PerTenant = DefaultPerTenant
	}
	if c.Total == 0 {
		c.Total = DefaultTotal
	}
	if c.Wait == 0 {
		c.Wait = DefaultWait
	}
}

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if c.Provider == nil {
		errs = append(errs, errors.New("sandbox capacity: Provider is required"))
	}
	if c.PerTenant < 0 || c.Total < 0 || c.Wait < 0 {
		errs = append(errs, errors.New("sandbox capacity: PerTenant, Total and Wait must be >= 0"))
	}
	return errors.Join(errs...)
}

// Provider caps the open sandboxes of the provider it wraps. It implements
// compute.Provider.
type Provider struct {
	cfg Config

	mu      sync.Mutex
	total   int
	tenants map[string]int
	freed   chan struct{} // closed and replaced whenever a slot frees
}

var _ compute.Provider = (*Provider)(nil)

// New wraps cfg.Provider.
func New(cfg Config) (*Provider, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, tenants: map[string]int{}, freed: make(chan struct{})}, nil
}

// Name is the wrapped provider's name.
func (p *Provider) Name() string { return p.cfg.Provider.Name() }

// Destroy destroys through the wrapped provider.
func (p *Provider) Destroy(ctx context.Context, key compute.Key) error {
	return p.cfg.Provider.Destroy(ctx, key)
}

// Close closes the wrapped provider when it has a Close (io.Closer).
func (p *Provider) Close() error {
	if c, ok := p.cfg.Provider.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Open waits for a slot of spec's tenant, then opens through the wrapped
// provider.
func (p *Provider) Open(ctx context.Context, spec compute.Spec) (compute.Sandbox, error) {
	tenant := spec.Key.TenantID
	if err := p.acquire(ctx, tenant); err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	sb, err := p.cfg.Provider.Open(ctx, spec)
	if err != nil {
		p.release(tenant)
		return nil, err
	}
	return &handle{Sandbox: sb, release: func() { p.release(tenant) }}, nil
}

// acquire takes a slot, waiting up to cfg.Wait.
func (p *Provider) acquire(ctx context.Context, tenant string) error {
	start := time.Now()
	timer := time.NewTimer(p.cfg.Wait)
	defer timer.Stop()
	for {
		p.mu.Lock()
		full := p.full(tenant)
		if full == nil {
			p.total++
			p.tenants[tenant]++
			p.mu.Unlock()
			return nil
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			full.Waited = time.Since(start)
			return full
		}
	}
}

// full returns the cap an Open of tenant would exceed, or nil.
func (p *Provider) full(tenant string) *Error {
	switch {
	case p.tenants[tenant] >= p.cfg.PerTenant:
		return &Error{Scope: "tenant", Limit: p.cfg.PerTenant}
	case p.total >= p.cfg.Total:
		return &Error{Scope: "total", Limit: p.cfg.Total}
	}
	return nil
}

func (p *Provider) release(tenant string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total--
	if p.tenants[tenant]--; p.tenants[tenant] == 0 {
		delete(p.tenants, tenant)
	}
	close(p.freed)
	p.freed = make(chan struct{})
}

// Running returns the open sandboxes of tenant and in total.
func (p *Provider) Running(tenant string) (ofTenant, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tenants[tenant], p.total
}

// handle releases its slot on the first Close.
type handle struct {
	compute.Sandbox
	once    sync.Once
	release func()
}

// SandboxID is the wrapped sandbox's provider id ("" for none).
func (h *handle) SandboxID() string { return compute.SandboxIDOf(h.Sandbox) }

// Close closes the sandbox and frees the slot.
func (h *handle) Close() error {
	err := h.Sandbox.Close()
	h.once.Do(h.release)
	return err
}
