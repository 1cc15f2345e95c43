package epp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// metaKey is the metadata entry that names a sandbox's xbot sandbox key.
const metaKey = "xbot_key"

// record is a SandboxRecord (the fields the host reads).
type record struct {
	SandboxID string            `json:"sandbox_id"`
	Status    string            `json:"status"`
	Metadata  map[string]string `json:"metadata"`
}

type recordResult struct {
	Sandbox record `json:"sandbox"`
}

type idParams struct {
	SandboxID string `json:"sandbox_id"`
}

type listParams struct {
	Metadata map[string]string `json:"metadata,omitempty"`
	Cursor   string            `json:"cursor,omitempty"`
}

type listResult struct {
	Sandboxes []record `json:"sandboxes"`
	Next      string   `json:"next"`
}

type createParams struct {
	Metadata map[string]string `json:"metadata"`
}

// maxListPages bounds a listing: a plugin whose cursor never ends cannot
// keep the host listing.
const maxListPages = 100

// maxSandboxID bounds a sandbox id: the run records it in an event
// (runtime.sandbox.attached) and errors show it.
const maxSandboxID = 256

// usableID reports whether a plugin's sandbox id can be recorded and
// shown: 1 to maxSandboxID bytes without control characters.
func usableID(id string) bool {
	return id != "" && len(id) <= maxSandboxID && !strings.ContainsFunc(id, unicode.IsControl)
}

// attach finds the run's sandbox: the recorded one, else a running one of
// the key, else a new one.
func (p *Provider) attach(ctx context.Context, s *session, spec compute.Spec) (record, error) {
	if spec.SandboxID != "" {
		return p.reconnect(ctx, s, spec.SandboxID)
	}
	key := keyID(spec.Key)
	recs, err := p.list(ctx, s, key)
	if err != nil {
		return record{}, fmt.Errorf("open sandbox: %w", err)
	}
	for _, r := range recs {
		if r.Status != "running" {
			continue
		}
		rec, err := p.reconnect(ctx, s, r.SandboxID)
		if err == nil {
			return rec, nil
		}
		if !errors.Is(err, compute.ErrSandboxLost) { // never split a key's workspace over a passing failure
			return record{}, fmt.Errorf("open sandbox: %w", err)
		}
	}
	var out recordResult
	if err := s.call(ctx, MSandboxCreate, createParams{Metadata: map[string]string{metaKey: key}}, &out, 0); err != nil {
		return record{}, fmt.Errorf("open sandbox: %w", err)
	}
	if !usableID(out.Sandbox.SandboxID) {
		return record{}, fmt.Errorf("open sandbox: provider %s created a sandbox whose id is empty, over %d bytes or holds control characters: %w",
			p.cfg.ID, maxSandboxID, ErrProvider)
	}
	return out.Sandbox, nil
}

// reconnect attaches to sandbox id: sandbox.connect, or sandbox.get when
// the plugin does not implement it. A sandbox that does not exist or does
// not run is lost.
func (p *Provider) reconnect(ctx context.Context, s *session, id string) (record, error) {
	var out recordResult
	err := s.call(ctx, MSandboxConnect, idParams{SandboxID: id}, &out, 0)
	if errors.Is(err, ErrFeatureNotSupported) {
		err = s.call(ctx, MSandboxGet, idParams{SandboxID: id}, &out, 0)
	}
	switch {
	case errors.Is(err, ErrSandboxNotFound):
		return record{}, sandboxLost(fmt.Errorf("the run's sandbox %s is gone: %w", id, err))
	case err != nil:
		return record{}, fmt.Errorf("reconnect to sandbox %s: %w", id, err)
	case out.Sandbox.SandboxID != id:
		return record{}, fmt.Errorf("provider %s answered sandbox %q for %q: %w", p.cfg.ID, out.Sandbox.SandboxID, id, ErrProvider)
	case out.Sandbox.Status != "running":
		return record{}, sandboxLost(fmt.Errorf("the run's sandbox %s is %s", id, out.Sandbox.Status))
	}
	return out.Sandbox, nil
}

// list returns the sandboxes of key, every page; it keeps only records
// whose metadata name key (a plugin that ignores the filter cannot hand a
// run another key's sandbox) and whose ids are usable.
func (p *Provider) list(ctx context.Context, s *session, key string) ([]record, error) {
	var out []record
	params := listParams{Metadata: map[string]string{metaKey: key}}
	for range maxListPages {
		var page listResult
		if err := s.call(ctx, MSandboxList, params, &page, 0); err != nil {
			return nil, err
		}
		for _, r := range page.Sandboxes {
			if r.Metadata[metaKey] == key && usableID(r.SandboxID) {
				out = append(out, r)
			}
		}
		if page.Next == "" {
			return out, nil
		}
		params.Cursor = page.Next
	}
	return nil, fmt.Errorf("provider %s: sandbox.list went on for over %d pages: %w", p.cfg.ID, maxListPages, ErrProvider)
}
