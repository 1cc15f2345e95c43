package im_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/im"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// TestProjectorUnderTheRunner writes runs to the events topic and lets the
// projector runner (a consumer group over TCP) drive the IM projector until
// the outbox holds every expected message.
func TestProjectorUnderTheRunner(t *testing.T) {
	t.Parallel()
	p, kc := outbox(t)
	evs := allCases(t, "reply", "approval", "failed_without_session", "cancel_and_follow_up")
	prod, err := kafka.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for _, e := range evs {
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := prod.Produce(testCtx(t), kc.EventsTopic(), e.RunID, raw); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, err := runner.New(ctx, runner.Config{Kafka: kc, Projector: p, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runner: %v", err)
		}
	})
	want := expected(t, evs)
	n := 0
	for _, ms := range want {
		n += len(ms)
	}
	eventually.Succeeds(t, waitTimeout, "the outbox holds every message", func() error {
		got, _ := byConversation(t, readOutbox(t, kc))
		have := 0
		for _, ms := range got {
			have += len(ms)
		}
		if have < n {
			return fmt.Errorf("%d of %d messages", have, n)
		}
		return nil
	})
	// Runs of one conversation come from different partitions, so only each
	// run's own order is guaranteed.
	got, _ := byConversation(t, readOutbox(t, kc))
	sameConversations(t, byRun(got), byRun(want))
}

// byRun regroups conversations' messages by run, keeping their order.
func byRun(convs map[string][]im.Message) map[string][]im.Message {
	out := map[string][]im.Message{}
	for _, ms := range convs {
		for _, m := range ms {
			out[m.RunID] = append(out[m.RunID], m)
		}
	}
	return out
}
