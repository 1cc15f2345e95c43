package systemtest_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The seed's verification steps drive conversations through the runtime
// client (services/api/client/agentruntime), as a hosting platform would.

// convWait bounds one wait for an event of a conversation.
const convWait = 60 * time.Second

// conv is a conversation of one agent and a reader of its events.
type conv struct {
	t    *testing.T
	rc   *agentruntime.Client
	ch   chan convItem
	stop context.CancelFunc
	got  []agentruntime.Event
}

type convItem struct {
	ev  agentruntime.Event
	err error
}

// runtimeClient is a runtime client of session on st's API as acme.
func runtimeClient(t *testing.T, st *stack.Stack, session, agent string) *agentruntime.Client {
	t.Helper()
	rc, err := agentruntime.New(agentruntime.Config{API: apiOf(t, st), SessionID: session, AgentID: agent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// newConv connects to session and reads its events after cursor (nil: from
// its start) in the background.
func newConv(t *testing.T, rc *agentruntime.Client, after *agentruntime.Cursor) *conv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &conv{t: t, rc: rc, ch: make(chan convItem, 4096), stop: cancel}
	t.Cleanup(cancel)
	go func() {
		defer close(c.ch)
		for ev, err := range rc.Events(ctx, after) {
			select {
			case c.ch <- convItem{ev, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return c
}

// submit hands an input to the conversation; a refusal fails the test.
func (c *conv) submit(id, content string) {
	c.t.Helper()
	if err := c.rc.Submit(c.t.Context(), agentruntime.Input{ID: id, Content: content}); err != nil {
		c.t.Fatalf("submit %s: %v", id, err)
	}
}

// until reads events until pred holds for one and returns it; the events
// ending or an error fails the test.
func (c *conv) until(what string, pred func(agentruntime.Event) bool) agentruntime.Event {
	c.t.Helper()
	within := convWait * time.Duration(eventually.Scale()) // as eventually's deadlines
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			c.t.Fatalf("no %s within %s after %d events", what, within, len(c.got))
		case it, ok := <-c.ch:
			if !ok || it.err != nil {
				c.t.Fatalf("waiting for %s: the events ended (%v) after %d", what, it.err, len(c.got))
			}
			c.got = append(c.got, it.ev)
			if pred(it.ev) {
				return it.ev
			}
		}
	}
}

// idle waits for a reply's end and then for the conversation to be idle.
func (c *conv) idle() agentruntime.ResponseEnded {
	c.t.Helper()
	end := c.until("a reply's end", isEvent[agentruntime.ResponseEnded]).(agentruntime.ResponseEnded)
	c.until("idle", func(ev agentruntime.Event) bool {
		s, ok := ev.(agentruntime.StatusChanged)
		return ok && s.Status == agentruntime.StatusIdle
	})
	return end
}

func isEvent[T agentruntime.Event](ev agentruntime.Event) bool { _, ok := ev.(T); return ok }

// startedFor matches the ResponseStarted of a reply that answers input.
func startedFor(input string) func(agentruntime.Event) bool {
	return func(ev agentruntime.Event) bool {
		r, ok := ev.(agentruntime.ResponseStarted)
		return ok && slices.Contains(r.InputIDs, input)
	}
}

// frameOf decodes a ResponseOutput's frame; ok is false for another event.
func frameOf(ev agentruntime.Event) (client.Chunk, bool) {
	o, ok := ev.(agentruntime.ResponseOutput)
	if !ok {
		return client.Chunk{}, false
	}
	var ch client.Chunk
	_ = json.Unmarshal(o.Frame, &ch)
	return ch, true
}

// after is the session stream chunk id a cursor continues after (the
// position is this package's own JSON; the tests read it to find the
// chunks a conversation's events came from).
func after(t *testing.T, c agentruntime.Cursor) string {
	t.Helper()
	var p struct {
		After string `json:"after"`
	}
	if err := json.Unmarshal(c.Position, &p); err != nil || p.After == "" {
		t.Fatalf("cursor %s: %v", c.Position, err)
	}
	return p.After
}

// eventuallySucceeds waits, up to convWait, for fn to succeed.
func eventuallySucceeds(t *testing.T, what string, fn func() error) {
	t.Helper()
	eventually.Succeeds(t, convWait, what, fn)
}
