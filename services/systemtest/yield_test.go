package systemtest_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The yield of a paused run (issue 16): a run paused for a person does not
// hold its sandbox key, and when it is resumed while another run of the key
// runs it waits its turn, FIFO by resume. Every run of one agent created by
// one principal shares a sandbox key. Each test's runs log, from their tool
// call, one line naming the run ($TMPDIR is the run's own directory), so
// the order of the lines is the order in which the runs got the key.

// yielder asks for the approval of a deploy; the deploy logs the run to log
// and works until gate exists.
func yielder(id, log, gate string) profile.Profile {
	deploy := fmt.Sprintf(`{"command":"echo deploy $TMPDIR >> %s; while [ ! -f %s ]; do sleep 0.02; done"}`, log, gate)
	return profile.Profile{ID: id, Model: profile.ModelScripted, Tools: []string{"shell"},
		Policy: policy.Config{Rules: []policy.Rule{deployRule}},
		Script: []profile.Turn{{Text: "Deploying.", ToolCalls: call1("shell", deploy)}, {Text: "Done."}}}
}

// yieldFiles are a test's run log and gate.
func yieldFiles(t *testing.T) (log, gate string) {
	dir := t.TempDir()
	log, gate = filepath.Join(dir, "log"), filepath.Join(dir, "gate")
	t.Cleanup(func() { openGate(t, gate) }) // a tool left by a killed executor ends
	return log, gate
}

func openGate(t *testing.T, gate string) {
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Error(err)
	}
}

// createIn creates a run of agent in session sess.
func createIn(t *testing.T, st *stack.Stack, agent, sess, key string) string {
	t.Helper()
	return createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: agent, Input: client.UserInput{Content: "ship it"},
		PlatformSessionID: sess}, key).RunID
}

// approveRun allows the one item the run waits for.
func approveRun(t *testing.T, st *stack.Stack, runID string) {
	t.Helper()
	items := pendingApprovals(t, st, runID, 1)
	if res := decide(t, st, runID, items[0], "allow", "item", runID+"-allow"); res.Outcome != client.OutcomeApplied {
		t.Fatalf("approval of %s: %+v", runID, res)
	}
}

// turns are the runs in the order their tool calls logged them.
func turns(t *testing.T, log string, runs ...string) []string {
	t.Helper()
	raw, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		for _, id := range runs {
			if strings.Contains(l, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// waitTurns waits until log names n runs.
func waitTurns(t *testing.T, log string, n int, runs ...string) {
	t.Helper()
	eventually.Succeeds(t, 10*time.Second, fmt.Sprintf("%d runs logged", n), func() error {
		if got := turns(t, log, runs...); len(got) != n {
			return fmt.Errorf("logged %v", got)
		}
		return nil
	})
}

// places are the places a run recorded in its key's queue.
func places(t *testing.T, st *stack.Stack, runID string) []int {
	t.Helper()
	var out []int
	for _, p := range payloads[events.RunQueuedPayload](t, st, runID) {
		out = append(out, p.Position)
	}
	return out
}

// waitQueued waits until the run waits queued at place.
func waitQueued(t *testing.T, st *stack.Stack, runID string, place int) {
	t.Helper()
	eventually.Succeeds(t, 10*time.Second, fmt.Sprintf("%s queued at %d", runID, place), func() error {
		p := places(t, st, runID)
		if getRun(t, st, runID).Status != "queued" || len(p) == 0 || p[len(p)-1] != place {
			return fmt.Errorf("places %v", p)
		}
		return nil
	})
}

// keeper notes in its run's $TMPDIR and in the shared workspace (its working
// directory), then asks for the approval of a deploy that logs what it
// finds there to log.
func keeper(id, log string) profile.Profile {
	note := `{"command":"echo kept > $TMPDIR/mark; echo $TMPDIR > last"}`
	deploy := fmt.Sprintf(`{"command":"echo deploy $(cat $TMPDIR/mark) $(cat last) >> %s"}`, log)
	return profile.Profile{ID: id, Model: profile.ModelScripted, Tools: []string{"shell"},
		Policy: policy.Config{Rules: []policy.Rule{deployRule}}, Script: []profile.Turn{
			{Text: "Preparing.", ToolCalls: call1("shell", note)},
			{Text: "Deploying.", ToolCalls: call1("shell", deploy)},
			{Text: "Done."},
		}}
}

// TestASecondRunOfTheKeyCompletesWhileTheFirstWaitsForApproval: the paused
// run yields its key, so the next run of the key runs and completes; the
// first, approved with the key free, resumes at once. It finds its own
// files as it left them and the shared workspace as the other run left it.
func TestASecondRunOfTheKeyCompletesWhileTheFirstWaitsForApproval(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "log")
	e, st, _ := agentEnv(t, keeper("ops", log))
	first := createIn(t, st, "ops", "sess-yield-a", "yield-first")
	waitStatus(t, st, first, "paused", 10*time.Second)
	second := createIn(t, st, "ops", "sess-yield-b", "yield-second")
	waitStatus(t, st, second, "paused", 10*time.Second) // it started: the paused run yielded the key
	approveRun(t, st, second)
	waitStatus(t, st, second, "completed", 10*time.Second)
	if run := getRun(t, st, first); run.Status != "paused" || run.PauseReason != string(events.PauseAwaitingApproval) {
		t.Fatalf("the first run is %s (%s) after the second completed, want still awaiting approval", run.Status, run.PauseReason)
	}
	approveRun(t, st, first)
	waitStatus(t, st, first, "completed", 10*time.Second)
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	deploys := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(deploys) != 2 || deploys[0] != deploys[1] || !strings.HasPrefix(deploys[1], "deploy kept ") || !strings.Contains(deploys[1], second) {
		t.Errorf("the deploys logged %q; want both to find their own mark and the second run's note in the workspace", deploys)
	}
	// The key was free when the first run was approved: it resumed at once.
	if n, m := countType(t, st, first, events.RunQueued), countType(t, st, first, events.RunResumed); n != 0 || m != 1 {
		t.Errorf("the first run queued %d times and resumed %d times, want 0 and 1", n, m)
	}
	e.invariants(st)
}

// resumeBehind pauses three runs on approvals, lets the first one run its
// deploy (which holds the key until the gate opens), then approves the third
// and the second: each waits queued, in the order it was resumed.
func resumeBehind(t *testing.T, st *stack.Stack, log string, sessions ...string) (runs []string) {
	t.Helper()
	for i, sess := range sessions {
		// Created once the one before paused, each starts at once: the
		// paused runs yielded the key.
		runs = append(runs, createIn(t, st, "ops", sess, fmt.Sprintf("yield-fifo-%d", i)))
		waitStatus(t, st, runs[i], "paused", 10*time.Second)
	}
	approveRun(t, st, runs[0])
	waitTurns(t, log, 1, runs...)
	approveRun(t, st, runs[2])
	waitQueued(t, st, runs[2], 1)
	approveRun(t, st, runs[1])
	waitQueued(t, st, runs[1], 2)
	return runs
}

// checkResumedInTurn checks that the runs resumed behind the first one got
// the key first resumed, first served, and recorded their places.
func checkResumedInTurn(t *testing.T, st *stack.Stack, log string, runs []string) {
	t.Helper()
	for _, id := range runs {
		waitStatus(t, st, id, "completed", 20*time.Second)
	}
	if got, want := turns(t, log, runs...), []string{runs[0], runs[2], runs[1]}; !slices.Equal(got, want) {
		t.Errorf("deploys ran in the order %v, want %v (the third run was approved before the second)", got, want)
	}
	for _, c := range []struct {
		run  string
		want []int
	}{{runs[0], nil}, {runs[2], []int{1}}, {runs[1], []int{2, 1}}} {
		if got := places(t, st, c.run); !slices.Equal(got, c.want) {
			t.Errorf("run %s recorded places %v, want %v", c.run, got, c.want)
		}
	}
}

func TestResumedRunsOfAKeyWaitTheirTurnFirstResumedFirst(t *testing.T) {
	t.Parallel()
	log, gate := yieldFiles(t)
	e, st, _ := agentEnv(t, yielder("ops", log, gate))
	startStreams(t, e, st)
	runs := resumeBehind(t, st, log, "sess-fifo-1", "sess-fifo-2", "sess-fifo-3")

	// The second run's session stream shows its place while it waits.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := openStream(ctx, t, st, "/v1/sessions/sess-fifo-2/stream", token)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("session stream: HTTP %d", resp.StatusCode)
	}
	queued := fmt.Sprintf(`"type":"data-queue","id":%q,"data":{"runId":%q,"position":2}`, runs[1], runs[1])
	if got := readUntil(t, resp.Body, `"type":"data-queue"`); !strings.Contains(got, queued) {
		t.Fatalf("the session stream shows\n%s\nwant %s", got, queued)
	}
	openGate(t, gate)
	checkResumedInTurn(t, st, log, runs)

	// The run's own stream shows each place, then the reply resumes.
	stream := readRunStream(t, st, runs[1], "")
	two, one := strings.Index(stream, `"position":2}`), strings.Index(stream, `"position":1}`)
	done := strings.Index(stream, `"type":"tool-output-available"`)
	if two < 0 || one < two || done < one {
		t.Errorf("the run stream shows places 2 at %d, 1 at %d and the deploy's output at %d:\n%s", two, one, done, stream)
	}
	e.invariants(st)
}

func TestResumeOrderSurvivesAnExecutorCrash(t *testing.T) {
	t.Parallel()
	log, gate := yieldFiles(t)
	e, front, executor := crashEnv(t, yielder("ops", log, gate))
	exA := executor("exA", nil)
	runs := resumeBehind(t, front, log, "sess-crash-1", "sess-crash-2", "sess-crash-3")
	exA.Executor.Kill()
	executor("exB", nil)
	// The new owner restores the deploy the dead one ran (lost: the model
	// is told), then hands the key on in the order the log keeps.
	eventually.Succeeds(t, 20*time.Second, "the first run restored", func() error {
		if countType(t, front, runs[0], events.RunCheckpointRestored) != 1 {
			return fmt.Errorf("not restored yet")
		}
		return nil
	})
	openGate(t, gate)
	checkResumedInTurn(t, front, log, runs)
	e.invariants(front)
}

// answerer asks a question, then logs the run to log and works until gate
// exists.
func answerer(id, log, gate string) profile.Profile {
	work := fmt.Sprintf(`{"command":"echo answered $TMPDIR >> %s; while [ ! -f %s ]; do sleep 0.02; done"}`, log, gate)
	return profile.Profile{ID: id, Model: profile.ModelScripted, Tools: []string{"shell", "ask_user"}, Script: []profile.Turn{
		{ToolCalls: call1("ask_user", `{"question":"Which branch?"}`)},
		{Text: "Working.", ToolCalls: call1("shell", work)},
		{Text: "Done."},
	}}
}

// TestAnAnswerWhileTheKeyIsTakenWaitsItsTurn: a clarification for a run
// whose key another run holds is accepted at once and applied when the run
// gets the key: the model gets the answer after the run ahead is done.
func TestAnAnswerWhileTheKeyIsTakenWaitsItsTurn(t *testing.T) {
	t.Parallel()
	log, gate := yieldFiles(t)
	e, st, reqs := agentEnv(t, answerer("asker", log, gate))
	first := createIn(t, st, "asker", "sess-answer-1", "answer-first")
	waitStatus(t, st, first, "paused", 10*time.Second)
	second := createIn(t, st, "asker", "sess-answer-2", "answer-second")
	waitStatus(t, st, second, "paused", 10*time.Second)
	input(t, st, first, "clarification", "main", "answer-first-1")
	waitTurns(t, log, 1, first, second)
	if res := input(t, st, second, "clarification", "dev", "answer-second-1"); res.Outcome != client.OutcomeAccepted {
		t.Fatalf("the answer to the queued run: %+v", res)
	}
	waitQueued(t, st, second, 1)
	openGate(t, gate)
	waitStatus(t, st, first, "completed", 20*time.Second)
	waitStatus(t, st, second, "completed", 20*time.Second)
	if got := turns(t, log, first, second); !slices.Equal(got, []string{first, second}) {
		t.Errorf("the runs worked in the order %v, want the first one first", got)
	}
	assertLog(t, st, second,
		"runtime.item.started:assistant_message", "runtime.item.completed:assistant_message",
		"runtime.item.started:clarification_request", "runtime.run.paused",
		"runtime.command.accepted", "runtime.run.queued",
		"runtime.item.completed:clarification_request", "runtime.command.applied", "runtime.run.resumed",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.item.started:command_execution", "runtime.item.completed:command_execution",
		"runtime.item.started:assistant_message", "delta+", "runtime.item.completed:assistant_message",
		"runtime.run.completed")
	var answers []string
	for _, r := range reqs.of("asker") {
		if m := r.Messages[len(r.Messages)-1]; m.Content == "dev" {
			answers = append(answers, m.Content)
		}
	}
	if len(answers) != 1 {
		t.Errorf("the model got the queued run's answer %d times, want once", len(answers))
	}
	e.invariants(st)
}

// TestASessionAnswerWhileTheKeyIsTakenWaitsItsTurn: a session message that
// answers a paused run's question while another run of the key runs is a
// clarification that waits its turn, as the answer of POST …/inputs does.
func TestASessionAnswerWhileTheKeyIsTakenWaitsItsTurn(t *testing.T) {
	t.Parallel()
	log, gate := yieldFiles(t)
	e, st, _ := agentEnv(t, answerer("asker", log, gate))
	first := createIn(t, st, "asker", "sess-sanswer-1", "sanswer-first")
	waitStatus(t, st, first, "paused", 10*time.Second)
	second := createIn(t, st, "asker", "sess-sanswer-2", "sanswer-second")
	waitStatus(t, st, second, "paused", 10*time.Second)
	input(t, st, first, "clarification", "main", "sanswer-first-1")
	waitTurns(t, log, 1, first, second)
	a := message(t, st, "sess-sanswer-2", "", "dev", "sanswer-second-1")
	if a.Intent != "clarification" || a.RunID != second || a.Outcome != client.OutcomeAccepted {
		t.Fatalf("the session's answer to the paused run: %+v, want a clarification of %s", a, second)
	}
	waitQueued(t, st, second, 1)
	openGate(t, gate)
	waitStatus(t, st, first, "completed", 20*time.Second)
	waitStatus(t, st, second, "completed", 20*time.Second)
	if got := turns(t, log, first, second); !slices.Equal(got, []string{first, second}) {
		t.Errorf("the runs worked in the order %v, want the first one first", got)
	}
	e.invariants(st)
}
