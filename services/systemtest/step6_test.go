package systemtest_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestStep6RestartWhileAReplyStreams is step 6 of the runtime client
// contract's verification: while a reply streams, the executor is killed
// (in the first transaction that streams the answer) and the API is
// restarted on the same address before a new executor takes the run over
// and repeats the interrupted model call. A reader that stays connected
// resumes by itself, and a reader that stored its last cursor and
// reconnects with it after the restart gets the rest: both see exactly the
// events a reader of the whole conversation sees afterwards — no part
// twice, none missing — and the reply completes, the interrupted attempt's
// text retracted.
func TestStep6RestartWhileAReplyStreams(t *testing.T) {
	t.Parallel()
	// A long reply: the executor's successor repeats the interrupted model
	// call, so the reply streams again after the restart whatever its timing.
	text := strings.Repeat("a reply that streams across a restart. ", 25)
	agent := profile.Profile{ID: "streamer", Model: profile.ModelScripted,
		Script: []profile.Turn{{Text: text, ChunkChars: 3, Delay: 10 * time.Millisecond}}}
	e := newEnv(t).withAgents(agent)
	addr := freeLoopbackAddr(t)
	front := func(name string) *stack.Stack {
		st := e.startWith(name, func(o *stack.Options) {
			o.Components, o.APIAddr = []stack.Component{stack.API, stack.ProjectorPostgres}, addr
		})
		startStreams(t, e, st)
		return st
	}
	executor := func(name string, hooks *kafka.Hooks) *stack.Stack {
		return e.startWith(name, func(o *stack.Options) { o.Components, o.ExecutorHooks = []stack.Component{stack.Executor}, hooks })
	}
	var killed atomic.Bool
	var exec1 atomic.Pointer[stack.Stack]
	front1 := front("front1")
	exec1.Store(executor("exec1", &kafka.Hooks{BeforeCommit: func(_ int32, recs []kafka.OutRecord) {
		if kafkatest.MidStream(recs) && killed.CompareAndSwap(false, true) {
			exec1.Load().Executor.Kill()
		}
	}}))
	stays := newConv(t, runtimeClient(t, front1, "sess-step6", "streamer"), nil)
	leaves := newConv(t, runtimeClient(t, front1, "sess-step6", "streamer"), nil)
	stays.submit("step6-1", "stream")
	stays.until("the reply streaming", isFrame("text-delta"))
	leaves.until("the reply streaming", isFrame("text-delta"))
	leaves.stop() // the platform's reader goes away with its last cursor recorded
	stored := leaves.got[len(leaves.got)-1].Cursor()
	eventually.Holds(t, convWait, "the executor killed mid-stream", killed.Load)
	front1.Stop(context.Background())
	front2 := front("front2")
	executor("exec2", nil)
	if end := stays.idle(); end.Outcome != agentruntime.OutcomeCompleted {
		t.Fatalf("the reply ended %s", end.Outcome)
	}
	whole := newConv(t, runtimeClient(t, front2, "sess-step6", "streamer"), nil)
	whole.idle()
	sameEvents(t, "the reader that stayed", stays.got, whole.got)
	back := newConv(t, runtimeClient(t, front2, "sess-step6", "streamer"), &stored)
	back.idle()
	sameEvents(t, "the reader back from its stored cursor", append(leaves.got, back.got...), whole.got)
	if !strings.Contains(replyText(whole.got), text) || !retracts(whole.got) {
		t.Errorf("the reply's text does not hold the whole answer after the retracted attempt: %q", replyText(whole.got))
	}
	e.invariants(front2)
}

// retracts reports whether a reply retracted a part (the text of a model
// call that a crash cut off).
func retracts(evs []agentruntime.Event) bool {
	for _, ev := range evs {
		if ch, ok := frameOf(ev); ok && ch.MessageMetadata != nil && len(ch.MessageMetadata.RetractedPartIDs) > 0 {
			return true
		}
	}
	return false
}

// sameEvents fails unless got is want, event by event, cursors included.
func sameEvents(t *testing.T, what string, got, want []agentruntime.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s saw %d events, a reader of the whole conversation %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, _ := agentruntime.Encode(got[i])
		w, _ := agentruntime.Encode(want[i])
		if string(g) != string(w) {
			t.Fatalf("%s: event %d is\n%s\nwant\n%s", what, i, g, w)
		}
	}
}
