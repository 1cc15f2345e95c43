package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
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

// TestAWriteThatCannotBeSentIsAnswered503: a create whose send never
// returns and does not heed its context (as Kafka's idempotent producer
// waits for a record in flight to a broker that stopped answering) is
// answered 503 unavailable with Retry-After once the write timeout has
// passed, telling the client to retry under the same key; its slot is free
// for the next create meanwhile.
func TestAWriteThatCannotBeSentIsAnswered503(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.Limits.MaxWrites = 1; c.Limits.WriteTimeout = 300 * time.Millisecond }))
	stuck := make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(stuck) }) })
	e.sender.onSend = func(c commands.Envelope) {
		if c.IdempotencyKey == "stuck" {
			<-stuck // deaf to the request's context
		}
	}
	// A bound far above the write timeout: the answer must come, however
	// slow the machine.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := e.doCtx(ctx, t, http.MethodPost, "/v1/runs?wait=0", tokenA,
		map[string]any{"agentId": "coder", "input": map[string]string{"content": "go"}}, "Idempotency-Key", "stuck")
	r.wantCode(t, http.StatusServiceUnavailable, string(events.CodeUnavailable))
	if p := r.problem(t); !strings.Contains(p.Detail, "same Idempotency-Key") {
		t.Errorf("detail %q does not tell the client to retry under the same key", p.Detail)
	}
	if got := r.header.Get("Retry-After"); got == "" {
		t.Error("no Retry-After on the 503 of a write that ran out of time")
	}
	// The stuck send still holds the fake sender's lock: another create is
	// sent once it returns, and needs the slot the first gave up.
	release.Do(func() { close(stuck) })
	e.do(t, http.MethodPost, "/v1/runs?wait=0", tokenA,
		map[string]any{"agentId": "coder", "input": map[string]string{"content": "go"}}, "Idempotency-Key", "next").
		want(t, http.StatusAccepted)
}

// TestACommandHandedToItsClientGivesItsSlotBack: with one write slot, a
// create whose sender has handed its command to a client that delivers it
// elsewhere (api.CommandQueued), and now only waits for the brokers'
// acknowledgement, does not keep a second create from being sent and
// answered; it is answered itself once its acknowledgement comes.
func TestACommandHandedToItsClientGivesItsSlotBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.Limits.MaxWrites = 1 }))
	queued, acked := make(chan struct{}), make(chan struct{})
	var ack sync.Once
	t.Cleanup(func() { ack.Do(func() { close(acked) }) })
	e.sender.first = func(ctx context.Context, c commands.Envelope) {
		if c.IdempotencyKey == "first" {
			api.CommandQueued(ctx)
			close(queued)
			<-acked
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c := e.apiAs(t, tokenA)
	first := post(ctx, c, "/v1/runs?wait=0", "first")
	select {
	case <-queued:
	case <-ctx.Done():
		t.Fatal("the first create never reached its sender")
	}
	// Were the slot held until the first's acknowledgement, which comes
	// only after this, the second would wait until its context ended.
	if err := <-post(ctx, c, "/v1/runs?wait=0", "second"); err != nil {
		t.Fatalf("second create while the first waits for its acknowledgement: %v", err)
	}
	select {
	case err := <-first:
		t.Fatalf("the first create was answered (%v) before its command was acknowledged", err)
	default:
	}
	ack.Do(func() { close(acked) })
	if err := <-first; err != nil {
		t.Errorf("first create: %v", err)
	}
}

// TestAQueuedCommandKeepsItsWriteTimeout: a create whose command is handed
// to its client (api.CommandQueued) but never acknowledged is still answered
// 503 once the write timeout has passed: giving the slot back does not stop
// the write's clock.
func TestAQueuedCommandKeepsItsWriteTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) { c.Limits.WriteTimeout = 300 * time.Millisecond }))
	stuck := make(chan struct{})
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(stuck) }) })
	e.sender.first = func(ctx context.Context, _ commands.Envelope) {
		api.CommandQueued(ctx)
		<-stuck // no acknowledgement, deaf to the request's context
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := e.doCtx(ctx, t, http.MethodPost, "/v1/runs?wait=0", tokenA,
		map[string]any{"agentId": "coder", "input": map[string]string{"content": "go"}}, "Idempotency-Key", "queued")
	r.wantCode(t, http.StatusServiceUnavailable, string(events.CodeUnavailable))
}
