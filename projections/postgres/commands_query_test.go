package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/projections/postgres"
)

// waitResult is what a WaitCommand call returned.
type waitResult struct {
	cmd postgres.Command
	err error
}

func TestWaitCommandWakesOnApply(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	postgres.SetRecheckInterval(f.store, time.Hour) // only a notification can wake the waiters
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := newRun(t, "acme", "")
	create := events.NewID("cmd")
	l.accept(create, "k")

	const waiters = 20
	results := make(chan waitResult, waiters)
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			c, err := f.store.WaitCommand(ctx, "acme", create)
			results <- waitResult{c, err}
		})
	}
	waitListening(t, f, 0)
	f.apply(t, offsets{}.records(t, 0, l.Events()...))
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil || r.cmd.CommandID != create || r.cmd.Outcome != "accepted" {
			t.Fatalf("WaitCommand = %+v, %v", r.cmd, r.err)
		}
	}
	// Already recorded: returns at once.
	if c, err := f.store.WaitCommand(ctx, "acme", create); err != nil || c.CommandID != create {
		t.Fatalf("WaitCommand = %+v, %v", c, err)
	}
}

func TestWaitCommandTimesOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := f.store.WaitCommand(ctx, "acme", events.NewID("cmd")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want DeadlineExceeded", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, err := f.store.WaitCommand(cctx, "acme", events.NewID("cmd")); !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want Canceled", err)
	}
}

// TestWaitCommandSurvivesALostListener kills the LISTEN connection: waiters
// still return, by re-checking, and the listener reconnects.
func TestWaitCommandSurvivesALostListener(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := newRun(t, "acme", "")
	create := events.NewID("cmd")
	l.accept(create, "k")
	done := make(chan waitResult, 1)
	go func() {
		c, err := f.store.WaitCommand(ctx, "acme", create)
		done <- waitResult{c, err}
	}()
	old := waitListening(t, f, 0)
	if _, err := f.pool.Exec(ctx, "SELECT pg_terminate_backend($1)", old); err != nil {
		t.Fatal(err)
	}
	f.apply(t, offsets{}.records(t, 0, l.Events()...))
	if r := <-done; r.err != nil || r.cmd.CommandID != create {
		t.Fatalf("WaitCommand = %+v, %v", r.cmd, r.err)
	}
	waitListening(t, f, old) // reconnected
}

// waitListening polls until exactly one connection of the test database
// LISTENs (all waiters of a Store share one) and its pid is not notPID; it
// returns the pid.
func waitListening(tb testing.TB, f *fixture, notPID uint32) uint32 {
	tb.Helper()
	var pids []uint32
	eventually.Succeeds(tb, 10*time.Second, fmt.Sprintf("one listening connection, not %d", notPID), func() error {
		err := f.pool.QueryRow(context.Background(), "SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity "+
			"WHERE datname = current_database() AND query LIKE 'LISTEN%' AND state = 'idle'").Scan(&pids)
		if err != nil {
			tb.Fatal(err)
		}
		if len(pids) == 1 && pids[0] != notPID {
			return nil
		}
		return fmt.Errorf("listening connections: %v", pids)
	})
	return pids[0]
}
