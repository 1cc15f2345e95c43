package capacity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/capacity"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

func newCapped(t *testing.T, perTenant, total int, wait time.Duration) *capacity.Provider {
	t.Helper()
	inner, err := local.New(local.Config{Dir: t.TempDir(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := capacity.New(capacity.Config{Provider: inner, PerTenant: perTenant, Total: total, Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func spec(tenant, run string) compute.Spec {
	return compute.Spec{Key: compute.Key{TenantID: tenant, WorkspaceID: "w", AgentID: "a", OwnerID: run}, RunID: run}
}

func mustOpen(t *testing.T, p *capacity.Provider, s compute.Spec) compute.Sandbox {
	t.Helper()
	sb, err := p.Open(t.Context(), s)
	if err != nil {
		t.Fatalf("Open(%s/%s): %v", s.Key.TenantID, s.RunID, err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// TestTenantCapRefusesAfterWait: the N+1-th sandbox of a tenant waits, then
// fails with the tenant cap named; another tenant is not held up.
func TestTenantCapRefusesAfterWait(t *testing.T) {
	t.Parallel()
	p := newCapped(t, 2, 10, 50*time.Millisecond)
	mustOpen(t, p, spec("a", "r1"))
	mustOpen(t, p, spec("a", "r2"))
	_, err := p.Open(t.Context(), spec("a", "r3"))
	var full *capacity.Error
	if !errors.As(err, &full) || !errors.Is(err, capacity.ErrFull) || full.Scope != "tenant" || full.Limit != 2 {
		t.Fatalf("third Open of tenant a = %v, want the tenant cap of 2", err)
	}
	if full.Waited < 50*time.Millisecond {
		t.Errorf("refused after %v, before the wait of 50ms", full.Waited)
	}
	mustOpen(t, p, spec("b", "r1"))
	if a, total := p.Running("a"); a != 2 || total != 3 {
		t.Errorf("Running = %d, %d; want 2, 3", a, total)
	}
}

// TestWaitingOpenGetsTheFreedSlot: an Open over the cap proceeds as soon as
// a sandbox closes; a double Close frees one slot only.
func TestWaitingOpenGetsTheFreedSlot(t *testing.T) {
	t.Parallel()
	p := newCapped(t, 1, 10, time.Minute)
	first := mustOpen(t, p, spec("a", "r1"))
	got := make(chan error, 1)
	go func() {
		sb, err := p.Open(t.Context(), spec("a", "r2"))
		if err == nil {
			t.Cleanup(func() { _ = sb.Close() })
		}
		got <- err
	}()
	_ = first.Close()
	_ = first.Close()
	if err := <-got; err != nil {
		t.Fatalf("waiting Open: %v", err)
	}
	if a, total := p.Running("a"); a != 1 || total != 1 {
		t.Errorf("Running = %d, %d; want 1, 1", a, total)
	}
}

// TestTotalCapAndCancel: the total cap holds across tenants; a waiting
// Open ends with its context.
func TestTotalCapAndCancel(t *testing.T) {
	t.Parallel()
	p := newCapped(t, 5, 2, time.Minute)
	mustOpen(t, p, spec("a", "r1"))
	mustOpen(t, p, spec("b", "r1"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := p.Open(ctx, spec("c", "r1")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open over the total cap with a cancelled context = %v", err)
	}
	short := newCapped(t, 5, 1, time.Millisecond)
	mustOpen(t, short, spec("a", "r1"))
	var full *capacity.Error
	if _, err := short.Open(t.Context(), spec("b", "r1")); !errors.As(err, &full) || full.Scope != "total" {
		t.Fatalf("Open over the total cap = %v, want the total cap", err)
	}
}
