package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestClaimIdempotencyKeyStandsForOneRequest: of many concurrent first claims
// of a key exactly one request wins and every claimer is told it; another
// tenant's key of the same name is claimed apart; a reset of the projector
// keeps the claims.
func TestClaimIdempotencyKeyStandsForOneRequest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const n = 16
	fps := make([]string, n)
	runs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			fps[i], runs[i], errs[i] = f.store.ClaimIdempotencyKey(ctx, "acme", "key-1", fmt.Sprintf("fp-%d", i), fmt.Sprintf("run-%d", i))
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || fps[i] != fps[0] || runs[i] != runs[0] || fps[0][len("fp-"):] != runs[0][len("run-"):] {
			t.Fatalf("claim %d: %q %q (%v), claim 0 got %q %q", i, fps[i], runs[i], errs[i], fps[0], runs[0])
		}
	}
	if fp, run, err := f.store.ClaimIdempotencyKey(ctx, "globex", "key-1", "mine", "run-g"); err != nil || fp != "mine" || run != "run-g" {
		t.Fatalf("another tenant's key: %q %q, %v", fp, run, err)
	}
	if err := f.store.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if fp, _, err := f.store.ClaimIdempotencyKey(ctx, "acme", "key-1", "late", "run-late"); err != nil || fp != fps[0] {
		t.Fatalf("after a reset: %q (%v), want %q", fp, err, fps[0])
	}
}
