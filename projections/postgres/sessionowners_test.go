package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestClaimSessionHasOneOwner: of many concurrent first claims of a session
// exactly one wins and every claimer is told the same owner; the session of
// another tenant with the same id is claimed apart; a reset of the projector
// keeps the owners.
func TestClaimSessionHasOneOwner(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const n = 16
	owners := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { owners[i], errs[i] = f.store.ClaimSession(ctx, "acme", "chat-1", fmt.Sprintf("actor-%d", i)) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || owners[i] != owners[0] {
			t.Fatalf("claim %d: owner %q (%v), claim 0 got %q", i, owners[i], errs[i], owners[0])
		}
	}
	if got, err := f.store.ClaimSession(ctx, "globex", "chat-1", "other"); err != nil || got != "other" {
		t.Fatalf("another tenant's session: owner %q, %v", got, err)
	}
	if err := f.store.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := f.store.ClaimSession(ctx, "acme", "chat-1", "late"); err != nil || got != owners[0] {
		t.Fatalf("after a reset: owner %q (%v), want %q", got, err, owners[0])
	}
}
