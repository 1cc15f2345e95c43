package systemtest_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

func TestMain(m *testing.M) {
	mcptest.ServeStdioIfAsked() // this binary is the stdio MCP server of the MCP tests
	os.Exit(pgtest.Run(chtest.Wrap(kafkatest.Wrap(m))))
}

const token, tenant = "tok-acme", "acme"

// env is one test's private Kafka cluster and Postgres database.
type env struct {
	t    *testing.T
	kcfg kafka.Config
	dsn  string
	cat  *profile.Catalog
	// keys are shared by every stack of the env, as by the processes of one
	// deployment.
	keys commands.KeyRing
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cl := kafkatest.NewCluster(t, 4)
	return newEnvOn(t, cl.Config())
}

// newEnvOn is newEnv on the cluster kcfg names, which the caller runs.
func newEnvOn(t *testing.T, kcfg kafka.Config) *env {
	t.Helper()
	slow := profile.Turn{Text: strings.Repeat("streaming a slow answer, word by word, so it can be cancelled. ", 3), ChunkChars: 4, Delay: 25 * time.Millisecond}
	// hold streams for about two minutes: a test that cancels or steers it
	// finds it running however slow the broker and the machine are.
	hold := profile.Turn{Text: strings.Repeat(slow.Text, 100), ChunkChars: 4, Delay: 25 * time.Millisecond}
	cat, err := profile.NewCatalog(profile.Profile{ID: "slow", Model: profile.ModelScripted, Script: []profile.Turn{slow, slow, slow}},
		profile.Profile{ID: "hold", Model: profile.ModelScripted, Script: []profile.Turn{hold}})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, kcfg: kcfg, dsn: pgtest.NewDatabase(t), cat: cat,
		keys: commands.GenerateKeyRing()}
}

// start runs a stack with the given components until the test ends.
func (e *env) start(name string, hooks *kafka.Hooks, comps ...stack.Component) *stack.Stack {
	e.t.Helper()
	return e.startWith(name, func(o *stack.Options) { o.ExecutorHooks, o.Components = hooks, comps })
}

// startWith runs a stack whose options edit adjusts.
func (e *env) startWith(name string, edit func(*stack.Options)) *stack.Stack {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	opts := stack.Options{
		Kafka: e.kcfg, PGDSN: e.dsn, APIAddr: "127.0.0.1:0", Tokens: testTokens(),
		Profiles: e.cat, ExecutorID: name, WaitDefault: 5 * time.Second, WaitMax: 10 * time.Second,
		Logger:      zaptest.NewLogger(e.t, zaptest.Level(zap.WarnLevel)).Named(name),
		CommandKeys: e.keys,
	}
	edit(&opts)
	st, err := stack.Start(ctx, opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Stop(context.Background()) })
	return st
}

// invariants checks the log invariant on Kafka and on Postgres and that both
// hold the same events.
func (e *env) invariants(st *stack.Stack) map[string]events.RunState {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fromKafka := contracttests.LogInvariant(ctx, e.t, contracttests.KafkaSource(e.kcfg))
	var fromPG map[string]events.RunState
	eventually.Succeeds(e.t, 10*time.Second, "postgres caught up with kafka", func() error {
		fromPG = contracttests.LogInvariant(ctx, e.t, contracttests.PostgresSource(st.Pool))
		for id, k := range fromKafka {
			if fromPG[id].LastSeq != k.LastSeq {
				return fmt.Errorf("run %s: kafka seq %d, postgres seq %d", id, k.LastSeq, fromPG[id].LastSeq)
			}
		}
		return nil
	})
	return fromKafka
}
