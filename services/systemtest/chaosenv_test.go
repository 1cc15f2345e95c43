//go:build chaos

package systemtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// chaos is one chaos scenario's system: a front stack (API and Postgres
// projector, unless a scenario says otherwise), executors started on demand,
// and an agent whose shell tool appends its run's id to a count file.
type chaos struct {
	*env
	front *stack.Stack
	count string
	// gates holds a file per run of the "held" agent that may go on.
	gates string
	opts  func(*stack.Options)
}

// chaosN picks the full count, or the CI count under -short.
func chaosN(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

// newChaos starts the system; front lists the front stack's components.
func newChaos(t *testing.T, front ...stack.Component) *chaos {
	t.Helper()
	return newChaosIn(newEnv(t), front...)
}

// newChaosIn is newChaos in the env e.
func newChaosIn(e *env, front ...stack.Component) *chaos {
	t := e.t
	t.Helper()
	c := newChaosAgents(e)
	comp, err := local.New(local.Config{Dir: t.TempDir(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	c.opts = func(o *stack.Options) { o.Compute = comp }
	if len(front) == 0 {
		front = []stack.Component{stack.API, stack.ProjectorPostgres}
	}
	c.front = c.stack("front", nil, front...)
	return c
}

// newChaosAgents gives e the chaos agents, whose shell tool appends its
// run's id to the count file:
//   - "tooler" calls it once, then answers;
//   - "approver" is tooler with the call needing a person's approval;
//   - "held" is tooler whose call first waits until the scenario lets its run
//     go on (release): a run in flight at a fault whatever the machine's
//     speed.
//
// The caller sets the chaos's opts and starts its front stack.
func newChaosAgents(e *env) *chaos {
	t := e.t
	t.Helper()
	count, gates := filepath.Join(t.TempDir(), "count"), t.TempDir()
	// The run's TMPDIR is <sandbox>/sessions/<sid>/runs/<runId>/tmp.
	tool := fmt.Sprintf(`{"command":"basename \"$(dirname \"$TMPDIR\")\" >> %s"}`, count)
	agent := profile.Profile{ID: "tooler", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{Text: "Running the tool now.", ChunkChars: 8, Delay: 2 * time.Millisecond, ToolCalls: call1("shell", tool)},
		{Text: "done"},
	}}
	approver := agent
	approver.ID = "approver"
	approver.Policy = policy.Config{Rules: []policy.Rule{{ID: "chaos-approval", Tool: "shell", Argument: "command",
		Pattern: "^basename", Action: policy.RequireApproval}}}
	held := agent
	held.ID = "held"
	held.Script = []profile.Turn{agent.Script[0], agent.Script[1]}
	held.Script[0].ToolCalls = call1("shell", fmt.Sprintf(`{"command":"r=$(basename \"$(dirname \"$TMPDIR\")\"); `+
		`while [ ! -e %s/$r ]; do sleep 0.01; done; echo $r >> %s","timeoutSeconds":600}`, gates, count))
	cat, err := profile.NewCatalog(agent, approver, held)
	if err != nil {
		t.Fatal(err)
	}
	e.cat = cat
	return &chaos{env: e, count: count, gates: gates}
}

// release lets the runs of the "held" agent among ids go on past their tool
// call's wait.
func (c *chaos) release(ids []string) {
	c.t.Helper()
	for _, id := range ids {
		if err := os.WriteFile(filepath.Join(c.gates, id), nil, 0o600); err != nil {
			c.t.Fatal(err)
		}
	}
}

// stack starts a stack with the given components and the chaos compute.
func (c *chaos) stack(name string, hooks *kafka.Hooks, comps ...stack.Component) *stack.Stack {
	c.t.Helper()
	return c.startWith(name, func(o *stack.Options) {
		c.opts(o)
		o.Components, o.ExecutorHooks = comps, hooks
	})
}

// createRuns submits n runs without waiting for their outcome; each has its
// own sandbox owner so they run in parallel.
func (c *chaos) createRuns(prefix string, n int) []string {
	c.t.Helper()
	return c.createRunsOf("tooler", prefix, n)
}

// createRunsOf is createRuns for another agent.
func (c *chaos) createRunsOf(agent, prefix string, n int) []string {
	c.t.Helper()
	ids := make([]string, n)
	api := apiOf(c.t, c.front)
	for i := range n {
		res, err := api.CreateRun(c.t.Context(), client.CreateRunRequest{AgentID: agent, Input: client.UserInput{Content: "go"},
			SandboxKey: &client.SandboxKeyRequest{OwnerID: fmt.Sprintf("%s-%d", prefix, i)}},
			client.CommandOptions{IdempotencyKey: fmt.Sprintf("%s-%d", prefix, i), Wait: client.WaitFor(0)})
		if err != nil || res.RunID == "" {
			c.t.Fatalf("create %d: %+v %v", i, res, err)
		}
		ids[i] = res.RunID
	}
	return ids
}

// terminal reports how many of ids are in a terminal state in Postgres.
func (c *chaos) terminal(ctx context.Context, ids []string) (int, error) {
	evs, err := contracttests.PostgresSource(c.front.Pool)(ctx)
	if err != nil {
		return 0, err
	}
	states, _ := contracttests.CheckLog(evs)
	n := 0
	for _, id := range ids {
		if states[id].CurrentStatus().Terminal() {
			n++
		}
	}
	return n, nil
}

// untilTerminal waits until every run of ids is terminal, polling every
// interval and calling tick (when not nil) before each poll but the first.
func (c *chaos) untilTerminal(ids []string, within, every time.Duration, tick func()) {
	c.t.Helper()
	first := true
	eventually.SucceedsEvery(c.t, within, every, "every run terminal", func() error {
		if !first && tick != nil {
			tick()
		}
		first = false
		n, err := c.terminal(context.Background(), ids)
		if err == nil && n != len(ids) {
			err = fmt.Errorf("%d of %d runs terminal", n, len(ids))
		}
		return err
	})
}

// check runs the end-of-scenario checks: the Postgres projector has caught
// up (lag 0), the log invariant holds on Kafka and Postgres with equal seqs,
// every command took effect once, every run of ids completed, and no tool
// ran twice. skip names runs left out (poison records).
func (c *chaos) check(proj *stack.Stack, ids []string, skip ...string) map[string]events.RunState {
	c.t.Helper()
	// The checks read the whole log several times and rebuild a view from
	// it: on the 100 k-event history, beside another suite, they took more
	// than a minute. The deadline only catches a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	eventually.Succeeds(c.t, 30*time.Second, "postgres projector caught up", func() error {
		lag, err := proj.Projectors["postgres"].Lag(ctx)
		if err != nil || lag.Total() != 0 {
			return fmt.Errorf("lag %v (%w)", lag.Partitions, err)
		}
		return nil
	})
	fromKafka := contracttests.LogInvariant(ctx, c.t, without(contracttests.KafkaSource(c.kcfg), skip))
	eventually.Succeeds(c.t, 10*time.Second, "postgres seq equals kafka seq", func() error {
		fromPG := contracttests.LogInvariant(ctx, c.t, without(contracttests.PostgresSource(c.front.Pool), skip))
		for id, k := range fromKafka {
			if fromPG[id].LastSeq != k.LastSeq {
				return fmt.Errorf("run %s: kafka seq %d, postgres seq %d", id, k.LastSeq, fromPG[id].LastSeq)
			}
		}
		return nil
	})
	evs, err := without(contracttests.KafkaSource(c.kcfg), skip)(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := contracttests.CheckEffectsOnce(evs); err != nil {
		c.t.Errorf("a command took effect more than once:\n%v", err)
	}
	c.checkRuns(fromKafka, ids)
	c.checkRebuild(ctx)
	return fromKafka
}

// checkRuns checks every run completed and its tool ran at most once, and
// exactly once when its tool call completed.
func (c *chaos) checkRuns(states map[string]events.RunState, ids []string) {
	c.t.Helper()
	ran := c.toolRuns()
	for _, id := range ids {
		st := states[id]
		if st.CurrentStatus() != events.StatusCompleted {
			c.t.Errorf("run %s: status %s, want completed", id, st.CurrentStatus())
		}
		done := 0
		for it := range st.Items.All() {
			if it.Type == events.ItemCommandExecution && it.Status == events.ItemStatusCompleted {
				done++
			}
		}
		if ran[id] > 1 || ran[id] < done {
			c.t.Errorf("run %s: the tool ran %d times, %d calls completed", id, ran[id], done)
		}
	}
}

// toolRuns counts the count file's lines per run id.
func (c *chaos) toolRuns() map[string]int {
	c.t.Helper()
	raw, err := os.ReadFile(c.count)
	if err != nil && !os.IsNotExist(err) {
		c.t.Fatal(err)
	}
	out := map[string]int{}
	for _, l := range strings.Fields(string(raw)) {
		out[l]++
	}
	return out
}

// without filters the runs in skip out of src.
func without(src contracttests.Source, skip []string) contracttests.Source {
	return func(ctx context.Context) ([]events.Envelope, error) {
		evs, err := src(ctx)
		out := evs[:0]
		for _, e := range evs {
			if !slices.Contains(skip, e.RunID) {
				out = append(out, e)
			}
		}
		return out, err
	}
}
