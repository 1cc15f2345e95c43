package systemtest_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestSessionMessageRaceWithTheRunsEnd sends a message while the session's
// run is finishing, in thirty sessions at once, each time twice at once
// under one idempotency key: it becomes a steer of that run or the session's
// next run, never invalid_state, never lost, never both, and its retry is
// its duplicate.
func TestSessionMessageRaceWithTheRunsEnd(t *testing.T) {
	t.Parallel()
	chat := echoAgent()
	// A reply of several deltas, paced like a streaming model: the run
	// takes some milliseconds to end.
	chat.Script[0].ChunkChars, chat.Script[0].Delay = 2, 2*time.Millisecond
	e, st, _ := agentEnv(t, chat)
	const sessions = 30
	var wg sync.WaitGroup
	intents := make([]string, sessions)
	for i := range sessions {
		wg.Go(func() {
			session := "sess-race-" + strconv.Itoa(i)
			// Each session has a sandbox owner of its own: the runs of one
			// sandbox key run one at a time, and the thirty would queue
			// behind each other for as long as the slowest takes.
			first := sendMessage(t, st, session, client.SessionMessageRequest{Content: "first " + strconv.Itoa(i), AgentID: "chat",
				SandboxOwnerID: "owner-" + session}, session+"-1")
			// Each session sends its second message at another point of
			// the first run's life: after its first i%9 events are read
			// back (it has 8), the last ones after the run ended.
			seen(t, st, first.RunID, i%9)
			// Sent twice at once under one key: one is the message, the
			// other its duplicate, naming the same run.
			var both [2]sessionAnswer
			var sent sync.WaitGroup
			for k := range both {
				sent.Go(func() { both[k] = message(t, st, session, "", "second "+strconv.Itoa(i), session+"-2") })
			}
			sent.Wait()
			second := both[0]
			if both[0].Outcome == client.OutcomeDuplicate {
				second = both[1]
			}
			if dup := both[0].Outcome == client.OutcomeDuplicate; dup == (both[1].Outcome == client.OutcomeDuplicate) ||
				both[0].RunID != both[1].RunID || both[0].Intent != both[1].Intent || both[0].CommandID != both[1].CommandID {
				t.Errorf("%s: a message and its retry answered %+v and %+v", session, both[0], both[1])
			}
			intents[i] = second.Intent
			if second.Intent != "steer" && second.Intent != "follow_up" {
				t.Errorf("%s: the second message became %+v", session, second)
				return
			}
			runs := []string{first.RunID}
			if second.RunID != first.RunID {
				runs = append(runs, second.RunID)
			}
			said := 0
			for _, r := range runs {
				waitStatus(t, st, r, "completed", 20*time.Second)
				said += timesSaid(t, st, r, "second "+strconv.Itoa(i))
			}
			if said != 1 {
				t.Errorf("%s: the second message is in the session's logs %d times, want once (%+v)", session, said, second)
			}
			if (second.Intent == "steer") != (second.RunID == first.RunID) {
				t.Errorf("%s: %s on run %s, first run %s", session, second.Intent, second.RunID, first.RunID)
			}
		})
	}
	wg.Wait()
	t.Logf("the second message became: %v", intents)
	e.invariants(st)
}

// seen waits until the read model holds n events of run runID.
func seen(t testing.TB, st *stack.Stack, runID string, n int) {
	t.Helper()
	eventually.Succeeds(t, 10*time.Second, "events of "+runID, func() error {
		if got := len(listEvents(t, st, runID)); got < n {
			return fmt.Errorf("%d events", got)
		}
		return nil
	})
}

// TestSessionFirstMessagesRace sends the first two messages of new sessions
// at once: one creates the session's run, the other steers it or follows it
// up; there is one first run.
func TestSessionFirstMessagesRace(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	for i := range 8 {
		session := "sess-first-" + strconv.Itoa(i)
		var wg sync.WaitGroup
		answers := make([]sessionAnswer, 2)
		for j := range answers {
			wg.Go(func() {
				answers[j] = message(t, st, session, "chat", "hi "+strconv.Itoa(j), session+"-"+strconv.Itoa(j))
			})
		}
		wg.Wait()
		runs := map[string]bool{}
		for j, a := range answers {
			if a.Intent != "steer" && a.Intent != "follow_up" {
				t.Fatalf("%s: message %d became %+v", session, j, a)
			}
			runs[a.RunID] = true
		}
		parents := 0
		for r := range runs {
			if waitStatus(t, st, r, "completed", 20*time.Second).ParentRunID == "" {
				parents++
			}
		}
		if parents != 1 {
			t.Errorf("%s: %d first runs (%+v), want 1", session, parents, answers)
		}
		for j := range answers {
			said := 0
			for r := range runs {
				said += timesSaid(t, st, r, "hi "+strconv.Itoa(j))
			}
			if said != 1 {
				t.Errorf("%s: message %d is in the session's logs %d times, want once", session, j, said)
			}
		}
	}
	e.invariants(st)
}

// TestSessionMessagesAtOnceOnAFinishedRun sends several messages at once to
// a session whose run has ended: the first admitted follows it up, and the
// others meet the new run while its create may still be on the commands
// topic (they are sent again behind it), steer it, or follow it up in turn.
// Each is said once, in one run, and the runs form one chain.
func TestSessionMessagesAtOnceOnAFinishedRun(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	const rounds, burst = 6, 4
	for i := range rounds {
		session := "sess-burst-" + strconv.Itoa(i)
		first := message(t, st, session, "chat", "start", session+"-0")
		waitStatus(t, st, first.RunID, "completed", 10*time.Second)
		answers := make([]sessionAnswer, burst)
		var wg sync.WaitGroup
		for j := range answers {
			wg.Go(func() {
				answers[j] = message(t, st, session, "", "burst "+strconv.Itoa(j), session+"-b"+strconv.Itoa(j))
			})
		}
		wg.Wait()
		runs := map[string]string{first.RunID: ""} // run → parent
		for j, a := range answers {
			if a.Intent != "steer" && a.Intent != "follow_up" {
				t.Fatalf("%s: message %d became %+v", session, j, a)
			}
			runs[a.RunID] = waitStatus(t, st, a.RunID, "completed", 20*time.Second).ParentRunID
		}
		for j := range answers {
			said := 0
			for r := range runs {
				said += timesSaid(t, st, r, "burst "+strconv.Itoa(j))
			}
			if said != 1 {
				t.Errorf("%s: message %d is in the session's logs %d times, want once (%+v)", session, j, said, answers)
			}
		}
		children := map[string]int{}
		for r, parent := range runs {
			if r != first.RunID {
				children[parent]++
			}
		}
		for parent, n := range children {
			if n != 1 {
				t.Errorf("%s: run %q has %d next runs, want a chain (%v)", session, parent, n, runs)
			}
		}
		t.Logf("%s: %v", session, answers)
	}
	e.invariants(st)
}
