package systemtest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/stack"
)

// What the API promises about a command it just accepted: its run's stream
// exists at once, its outcome is known as soon as the log holds it, and a
// command in flight is pending, not unknown.

func TestStreamRightAfterAnUnwaitedCreateNever404s(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	startStreams(t, e, st)
	c := apiOf(t, st)
	for i := range 30 {
		res, err := c.CreateRun(t.Context(), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "hi"}},
			client.CommandOptions{IdempotencyKey: fmt.Sprintf("now-%d", i), Wait: client.WaitFor(0)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		resp := openStream(ctx, t, st, "/v1/runs/"+res.RunID+"/stream", token)
		body := readAll(t, resp)
		cancel()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("try %d: stream of %s right after its create: HTTP %d %s", i, res.RunID, resp.StatusCode, body)
		}
		if !strings.Contains(body, `"type":"finish"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
			t.Fatalf("try %d: stream of %s is not the whole reply:\n%s", i, res.RunID, body)
		}
	}
}

func TestSessionStreamRightAfterAnUnwaitedCreateNever404s(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	startStreams(t, e, st)
	c := apiOf(t, st)
	for i := range 10 {
		session := fmt.Sprintf("sess-now-%d", i)
		_, err := c.CreateRun(t.Context(), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "hi"},
			PlatformSessionID: session}, client.CommandOptions{Wait: client.WaitFor(0)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		resp := openStream(ctx, t, st, "/v1/sessions/"+session+"/stream", token)
		if resp.StatusCode != http.StatusOK {
			cancel()
			t.Fatalf("try %d: session stream right after its first create: HTTP %d %s", i, resp.StatusCode, readAll(t, resp))
		}
		// Its reply may have ended already: a session stream without a
		// position starts at the first reply that has not, so it may have
		// nothing to send; 200 is what it promises.
		_ = resp.Body.Close()
		cancel()
	}
}

// TestARunIsReadableRightAfterItsCreateIsAnswered: the answer comes from the
// log, maybe before the read model has the run; reading it or sending it a
// command at once still finds it.
func TestARunIsReadableRightAfterItsCreateIsAnswered(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	startStreams(t, e, st)
	c := apiOf(t, st)
	for i := range 30 {
		res := createRun(t, c, client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "hi"}}, fmt.Sprintf("read-%d", i))
		if res.Outcome != client.OutcomeAccepted {
			t.Fatalf("create: %+v", res)
		}
		var err error
		switch i % 3 {
		case 0:
			_, err = c.GetRun(t.Context(), res.RunID)
		case 1:
			_, err = c.ListEvents(t.Context(), res.RunID, 0, 10)
		default:
			_, err = c.CancelRun(t.Context(), res.RunID, "enough", client.CommandOptions{})
		}
		if err != nil {
			t.Fatalf("try %d: right after its create answered, run %s: %v", i, res.RunID, err)
		}
	}
}

// TestARunCreatedThroughOneInstanceIsReadableThroughAnother: behind a load
// balancer the read after a create may reach another API instance, whose
// tail shows the run on the log before the read model has it.
func TestARunCreatedThroughOneInstanceIsReadableThroughAnother(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	other := e.startWith("api-2", func(o *stack.Options) { o.Components = []stack.Component{stack.API} })
	startStreams(t, e, st)
	startStreams(t, e, other)
	c, c2 := apiOf(t, st), apiOf(t, other)
	for i := range 30 {
		res := createRun(t, c, client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "hi"}}, fmt.Sprintf("lb-%d", i))
		if res.Outcome != client.OutcomeAccepted {
			t.Fatalf("create: %+v", res)
		}
		var err error
		if i%2 == 0 {
			_, err = c2.GetRun(t.Context(), res.RunID)
		} else {
			_, err = c2.ListEvents(t.Context(), res.RunID, 0, 10)
		}
		if err != nil {
			t.Fatalf("try %d: run %s created through one instance, read through another: %v", i, res.RunID, err)
		}
	}
}

// TestARunReadThroughALaggingInstanceWaitsForItsTail: the other instance's
// tail is held back for 600 ms, past the 250 ms a read used to give it,
// while no read model has the run yet: the read waits at the tail's barrier
// (everything committed before the read) instead of answering 404, and
// finds the run once the tail and the read model have it.
func TestARunReadThroughALaggingInstanceWaitsForItsTail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	one := e.start("api-1", nil, stack.API, stack.Executor) // no projector: the read model lags
	gate := make(chan struct{})
	held := func() {
		select {
		case <-gate:
		case <-t.Context().Done():
		}
	}
	two := e.startWith("api-2", func(o *stack.Options) {
		o.Components, o.StreamAppearWait, o.BeforeStreamDelivery = []stack.Component{stack.API}, time.Minute, held
	})
	startStreams(t, e, one)
	startStreams(t, e, two)
	res := createRun(t, apiOf(t, one), client.CreateRunRequest{AgentID: "demo", Input: client.UserInput{Content: "hi"}}, "lag-1")
	if res.Outcome != client.OutcomeAccepted {
		t.Fatalf("create: %+v", res)
	}
	read := make(chan error, 1)
	go func() {
		_, err := apiOf(t, two).GetRun(t.Context(), res.RunID)
		read <- err
	}()
	time.AfterFunc(600*time.Millisecond, func() { close(gate) })
	<-gate
	e.start("projector", nil, stack.ProjectorPostgres)
	if err := <-read; err != nil {
		t.Fatalf("run %s read through an instance whose tail lagged: %v", res.RunID, err)
	}
}

func TestAStreamOfAnotherTenantsRunIs404LikeAMissingOne(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	startStreams(t, e, st)
	res, err := apiOf(t, st).CreateRun(t.Context(), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "hi"}},
		client.CommandOptions{Wait: client.WaitFor(0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, runID := range []string{res.RunID, "run_does_not_exist"} {
		resp := openStream(t.Context(), t, st, "/v1/runs/"+runID+"/stream", otherToken)
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"code":"run_not_found"`) {
			t.Fatalf("another tenant's stream of %s: HTTP %d %s", runID, resp.StatusCode, body)
		}
	}
}

// TestStreamHeadersArriveBeforeAnyEvent opens a session stream with nothing
// to send (its only run ended) and only then creates the session's next
// run: the headers cannot have waited for an event.
func TestStreamHeadersArriveBeforeAnyEvent(t *testing.T) {
	t.Parallel()
	e, st, _ := agentEnv(t, echoAgent())
	startStreams(t, e, st)
	c := apiOf(t, st)
	first := createRun(t, c, client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "one"}}, "hdr-1")
	run := waitStatus(t, st, first.RunID, "completed", 10*time.Second)
	// Well inside the 15 s keep-alive: without the headers sent at once, the
	// request would still be waiting for its first byte.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp := openStream(ctx, t, st, "/v1/sessions/"+run.PlatformSessionID+"/stream", token)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Vercel-Ai-Ui-Message-Stream") != "v1" {
		t.Fatalf("session stream: HTTP %d %v", resp.StatusCode, resp.Header)
	}
	second := createRun(t, c, client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "two"},
		PlatformSessionID: run.PlatformSessionID}, "hdr-2")
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "id: "+second.RunID+":") {
			return
		}
	}
	t.Fatalf("the session stream ended without the next run %s: %v", second.RunID, sc.Err())
}

// TestACommandInFlightIsPendingNotUnknown polls a command in flight through
// the instance that sent it and through another (behind a load balancer the
// poll may reach either): both answer pending, the other one because its
// tail of the commands topic showed the command. Another tenant gets 404
// from both, as for a missing id. Once an executor runs, both answer the
// outcome.
func TestACommandInFlightIsPendingNotUnknown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("api", nil, stack.API, stack.ProjectorPostgres) // no executor: nothing is admitted
	other := e.start("api-2", nil, stack.API)
	startStreams(t, e, other)
	c := apiOf(t, st)
	res, err := c.CreateRun(t.Context(), client.CreateRunRequest{AgentID: "demo", Input: client.UserInput{Content: "hi"}},
		client.CommandOptions{Wait: client.WaitFor(0)})
	if err != nil || res.Outcome != client.OutcomePending {
		t.Fatalf("create: %+v %v", res, err)
	}
	for name, inst := range map[string]*stack.Stack{"the instance that sent it": st, "another instance": other} {
		cmd, err := apiOf(t, inst).GetCommand(t.Context(), res.CommandID)
		if err != nil || cmd.Outcome != client.OutcomePending || cmd.FirstOutcome != client.OutcomePending ||
			cmd.RunID != res.RunID || cmd.Type != "CreateRun" {
			t.Fatalf("command in flight, through %s: %+v %v", name, cmd, err)
		}
		if _, err := apiClient(t, inst, otherToken, nil).GetCommand(t.Context(), res.CommandID); !isProblem(err, http.StatusNotFound, "command_not_found") {
			t.Fatalf("another tenant's GET of a command in flight, through %s: %v", name, err)
		}
		if _, err := apiOf(t, inst).GetCommand(t.Context(), "cmd_never_sent"); !isProblem(err, http.StatusNotFound, "command_not_found") {
			t.Fatalf("GET of a command never sent, through %s: %v", name, err)
		}
	}
	e.start("executor", nil, stack.Executor)
	for _, inst := range []*stack.Stack{st, other} {
		eventually.Succeeds(t, 20*time.Second, "the command's outcome", func() error {
			cmd, err := apiOf(t, inst).GetCommand(t.Context(), res.CommandID)
			if err != nil || cmd.FirstOutcome != client.OutcomeAccepted {
				return fmt.Errorf("%+v %w", cmd, err)
			}
			return nil
		})
	}
}

// TestOutcomesFromTheLogEqualTheReadModels answers commands with no
// projector running, so the answers can only come from the API's tail of
// the events topic, then compares them with the read model's once a
// projector has caught up.
func TestOutcomesFromTheLogEqualTheReadModels(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("api", nil, stack.API, stack.Executor)
	startStreams(t, e, st)
	c := apiOf(t, st)
	wait := func(key string) client.CommandOptions {
		return client.CommandOptions{IdempotencyKey: key, Wait: client.WaitFor(10 * time.Second)}
	}
	hi := client.CreateRunRequest{AgentID: "demo", Input: client.UserInput{Content: "hi"}}
	created, err := c.CreateRun(t.Context(), hi, wait("log-1"))
	if err != nil || created.Outcome != client.OutcomeAccepted {
		t.Fatalf("create: %+v %v", created, err)
	}
	again, err := c.CreateRun(t.Context(), hi, wait("log-1"))
	if err != nil || again.Outcome != client.OutcomeDuplicate || again.OriginalOutcome != client.OutcomeAccepted {
		t.Fatalf("the same create again: %+v %v", again, err)
	}
	unknown, err := c.CreateRun(t.Context(), client.CreateRunRequest{AgentID: "nobody", Input: client.UserInput{Content: "hi"}}, wait("log-2"))
	if !errors.Is(err, client.ErrUnknownAgent) || unknown.Outcome != client.OutcomeRejected || unknown.Code != "unknown_agent" {
		t.Fatalf("create for an unknown agent: %+v %v", unknown, err)
	}
	e.start("projector", nil, stack.ProjectorPostgres)
	for _, res := range []client.CommandResult{created, again, unknown} {
		id := res.CommandID
		if res.DuplicateCommandID != "" {
			id = res.DuplicateCommandID
		}
		eventually.Succeeds(t, 20*time.Second, "the read model holds "+id, func() error {
			cmd, err := c.GetCommand(t.Context(), id)
			if err != nil || cmd.Seq == 0 {
				return fmt.Errorf("%+v %w", cmd, err)
			}
			if cmd.FirstOutcome != res.Outcome || cmd.RunID != res.RunID || cmd.OriginalCommandID != res.OriginalCommandID ||
				cmd.OriginalOutcome != res.OriginalOutcome || (cmd.FirstOutcome == cmd.Outcome &&
				(cmd.Code != res.Code || cmd.Message != res.Detail)) {
				t.Fatalf("the log answered %+v, the read model holds %+v", res, cmd)
			}
			return nil
		})
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", resp.Request.URL.Path, err)
	}
	return b.String()
}
