//go:build chaos

package systemtest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/stack"
)

// lostCommit makes some executor commits land on the broker while the
// executor is told they failed: the EndTxn request is applied by the real
// handler (sent again through a side client while the original waits), and
// the original gets an error answer.
type lostCommit struct {
	side    *kgo.Client
	every   int // inject on every every-th executor commit
	max     int
	seen    int
	mu      sync.Mutex
	landed  int // injected commits the broker confirmed
	failed  []error
	sending atomic.Bool
}

// pick reports whether to hide this commit's outcome. Another EndTxn may be
// controlled while one sleeps: only one injection is in flight at a time.
func (l *lostCommit) pick() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen++
	if l.landed+len(l.failed) >= l.max || l.seen%l.every != 0 {
		return false
	}
	return l.sending.CompareAndSwap(false, true)
}

// control is the kfake control function for EndTxn.
func (l *lostCommit) control(c *faultChaos) func(kmsg.Request) (kmsg.Response, error, bool) {
	return func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.fake.KeepControl()
		req := r.(*kmsg.EndTxnRequest)
		if l.sending.Load() || !req.Commit || !strings.HasPrefix(req.TransactionalID, kafka.DefaultExecutorGroup) {
			return nil, nil, false
		}
		if !l.pick() {
			return nil, nil, false
		}
		side := *req
		var resp *kmsg.EndTxnResponse
		var err error
		c.fake.SleepControl(func() { // the real handler runs while this request sleeps
			// kfake answers at once; the bound only keeps a broken cluster from hanging the test.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			resp, err = side.RequestWith(ctx, l.side)
		})
		l.mu.Lock()
		l.sending.Store(false)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err != nil {
			l.failed = append(l.failed, err)
		} else {
			l.landed++
		}
		l.mu.Unlock()
		out := req.ResponseKind().(*kmsg.EndTxnResponse)
		out.ErrorCode = kerr.UnknownServerError.Code // not retriable: the client learns nothing of the outcome
		return out, nil, true
	}
}

// TestChaosCommitOutcomeLost commits executor transactions on the broker but
// answers the executor with an error: it must treat the outcome as unknown,
// give its partitions up, and whoever owns them next rebuilds from what
// committed, so nothing takes effect twice.
func TestChaosCommitOutcomeLost(t *testing.T) {
	t.Parallel()
	c := newFaultChaos(t, "an EndTxn whose answer is lost: the scenario killing the transaction coordinator mid-commit (chaosbroker_test.go)")
	side, err := kgo.NewClient(kgo.SeedBrokers(c.kcfg.Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	// Every 7th commit: often enough to hit several partitions and both
	// executors, rare enough that runs keep progressing between injections.
	l := &lostCommit{side: side, every: 7, max: chaosN(6, 3)}
	c.fake.ControlKey(int16(kmsg.EndTxn), l.control(c))
	c.stack("ex1", nil, stack.Executor)
	c.stack("ex2", nil, stack.Executor)
	ids := c.createRuns("lost", chaosN(40, 16))
	c.untilTerminal(ids, 2*time.Minute, 50*time.Millisecond, nil)
	l.mu.Lock()
	landed, failed := l.landed, errors.Join(l.failed...)
	l.mu.Unlock()
	t.Logf("%d commits landed with their outcome hidden from the executor", landed)
	if failed != nil {
		t.Errorf("a side-channel commit failed: %v", failed)
	}
	if landed == 0 {
		t.Fatal("no commit outcome was hidden: the scenario proves nothing")
	}
	if n := c.logged("append failed; partition given up", "outcome unknown"); n < landed {
		t.Errorf("%d executors gave up a partition on an unknown outcome, want %d", n, landed)
	}
	c.check(c.front, ids)
}
