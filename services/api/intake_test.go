package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// post sends a create in the background; its channel gets the answer's
// status (or the error).
func post(ctx context.Context, c *client.Client, path, key string) chan error {
	done := make(chan error, 1)
	go func() {
		res, err := c.Send(ctx, http.MethodPost, path,
			map[string]any{"agentId": "coder", "input": map[string]string{"content": "go"}}, "Idempotency-Key", key)
		if err == nil {
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusAccepted {
				err = fmt.Errorf("POST %s: %d %s", path, res.StatusCode, raw)
			}
		}
		done <- err
	}()
	return done
}

// TestWritesBeyondTheBoundWaitTheirTurn: with one write slot, a create
// whose send has not returned holds it; a second create waits for it without
// reaching the sender, a read is answered meanwhile, and the second create
// is sent once the first's send returns.
func TestWritesBeyondTheBoundWaitTheirTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.Limits.MaxWrites = 1 }))
	sending, gate := make(chan struct{}, 1), make(chan struct{})
	var sent atomic.Int32 // the sender's own count is behind its lock, which the blocked send holds
	e.sender.onSend = func(c commands.Envelope) {
		sent.Add(1)
		if c.IdempotencyKey == "first" {
			sending <- struct{}{}
			<-gate
		}
	}
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(gate)
		}
	}
	t.Cleanup(open)
	c := e.apiAs(t, tokenA)
	first := post(t.Context(), c, "/v1/runs?wait=0", "first")
	<-sending
	second := post(t.Context(), c, "/v1/runs?wait=0", "second")
	eventually.Holds(t, 10*time.Second, "the second create to wait for a slot", func() bool { return api.WritesWaiting(e.api) == 1 })
	if n := sent.Load(); n != 1 {
		t.Fatalf("%d commands sent while the first send holds the only slot, want 1", n)
	}
	e.do(t, http.MethodGet, "/v1/runs", tokenA, nil).want(t, http.StatusOK) // reads take no slot
	open()
	for name, done := range map[string]chan error{"first": first, "second": second} {
		if err := <-done; err != nil {
			t.Errorf("%s create: %v", name, err)
		}
	}
	if n := len(e.sender.envelopes()); n != 2 {
		t.Errorf("%d commands sent, want 2", n)
	}
}

// TestAWriteWaitingForItsOutcomeHoldsNoSlot: with one write slot, a create
// sent and waiting for its outcome (which never comes) does not keep a
// second create from being sent and answered.
func TestAWriteWaitingForItsOutcomeHoldsNoSlot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.Limits.MaxWrites = 1; c.WaitMax = time.Minute }))
	e.sender.executor = false // no outcome is ever recorded
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := e.apiAs(t, tokenA)
	first := post(ctx, c, "/v1/runs?wait=1m", "first")
	eventually.Holds(t, 10*time.Second, "the first create to be sent", func() bool { return len(e.sender.envelopes()) == 1 })
	// Were the slot held through the first's wait (a minute), the second
	// would get it only after its own bound.
	sctx, scancel := context.WithTimeout(ctx, 20*time.Second)
	defer scancel()
	if err := <-post(sctx, c, "/v1/runs?wait=0", "second"); err != nil {
		t.Fatalf("second create while the first waits for its outcome: %v", err)
	}
	select {
	case err := <-first:
		t.Fatalf("the first create returned (%v) without an outcome", err)
	default:
	}
}
