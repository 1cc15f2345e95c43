package systemtest_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/stack"
)

// closingCompute counts its Close calls.
type closingCompute struct {
	*local.Provider
	closed atomic.Int32
}

func (c *closingCompute) Close() error {
	c.closed.Add(1)
	return c.Provider.Close()
}

// TestTheStackClosesItsComputeProviderWhenItStops: a stack that stops
// closes the compute provider it ran tools with (the local and bwrap
// providers then remove the cgroups they kept for their next sandboxes),
// once, however often it is stopped.
func TestTheStackClosesItsComputeProviderWhenItStops(t *testing.T) {
	t.Parallel()
	c := &closingCompute{Provider: localCompute(t, t.TempDir())}
	st := newEnv(t).startWith("all", func(o *stack.Options) { o.Compute = c })
	if n := c.closed.Load(); n != 0 {
		t.Fatalf("the provider was closed %d times while the stack ran", n)
	}
	st.Stop(context.Background())
	st.Stop(context.Background())
	if n := c.closed.Load(); n != 1 {
		t.Errorf("the stack closed its compute provider %d times, want once", n)
	}
}
