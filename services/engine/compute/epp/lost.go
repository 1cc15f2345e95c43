package epp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// discardTimeout bounds killing a lost sandbox when its handle closes.
const discardTimeout = 10 * time.Second

// track registers an open handle of key: Destroy of the key reaches it.
func (p *Provider) track(key string, b *Sandbox) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open[key] == nil {
		p.open[key] = map[*Sandbox]struct{}{}
	}
	p.open[key][b] = struct{}{}
}

func (p *Provider) untrack(key string, b *Sandbox) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.open[key], b)
	if len(p.open[key]) == 0 {
		delete(p.open, key)
	}
}

// loseAll makes every open handle of key lost (a Destroy): their commands
// are killed and every call of them answers compute.ErrSandboxLost.
func (p *Provider) loseAll(key string) {
	p.mu.Lock()
	var hs []*Sandbox
	for b := range p.open[key] {
		hs = append(hs, b)
	}
	p.mu.Unlock()
	for _, b := range hs {
		b.lose(fmt.Errorf("sandbox %s was destroyed", b.id), true)
		_ = b.Kill()
	}
}

// lose marks the handle's sandbox lost with cause (once); destroyed says
// the sandbox is gone already, so Close need not kill it.
func (b *Sandbox) lose(cause error, destroyed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost != nil {
		return
	}
	b.lost, b.destroyed = sandboxLost(cause), destroyed
	close(b.lostCh)
}

// note marks the handle lost when err says its sandbox is lost, and
// returns err.
func (b *Sandbox) note(err error) error {
	if errors.Is(err, compute.ErrSandboxLost) {
		b.lose(err, false)
	}
	return err
}

// lostErr is why the handle's sandbox is lost, or nil.
func (b *Sandbox) lostErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lost
}

// discard kills a lost sandbox the plugin may still keep, so that the
// key's next run gets a fresh one: nothing of a lost sandbox is reused.
func (b *Sandbox) discard() {
	b.mu.Lock()
	skip := b.lost == nil || b.destroyed
	b.mu.Unlock()
	if skip {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), discardTimeout)
	defer cancel()
	s, err := openSession(ctx, &b.p.cfg)
	if err != nil {
		b.p.cfg.Logger.Warn("could not kill a lost sandbox")
		return
	}
	defer s.close()
	var out struct {
		Killed bool `json:"killed"`
	}
	if err := s.call(ctx, MSandboxKill, idParams{SandboxID: b.id}, &out, 0); err != nil {
		b.p.cfg.Logger.Warn("could not kill a lost sandbox")
	}
}
