package systemtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Run(chtest.Wrap(m))) }

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
	return newEnvOn(t, kafka.Config{Brokers: cl.Addrs(), Partitions: 4})
}

// newEnvOn is newEnv on the cluster kcfg names, which the caller runs.
func newEnvOn(t *testing.T, kcfg kafka.Config) *env {
	t.Helper()
	slow := profile.Turn{Text: strings.Repeat("streaming a slow answer, word by word, so it can be cancelled. ", 3), ChunkChars: 4, Delay: 25 * time.Millisecond}
	cat, err := profile.NewCatalog(profile.Profile{ID: "slow", Model: profile.ModelScripted, Script: []profile.Turn{slow, slow, slow}})
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

// call sends a JSON request and decodes the JSON answer.
func call(t *testing.T, st *stack.Stack, method, path, tok string, body any, hdr ...string) (int, map[string]any) {
	t.Helper()
	resp, err := apiClient(t, st, tok, nil).Send(context.Background(), method, path, body, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// apiClient is a client of st's API that sends tok, over hc (nil: the
// default HTTP client).
func apiClient(t testing.TB, st *stack.Stack, tok string, hc *http.Client) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: "http://" + st.Addr(), Token: tok, HTTP: hc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func waitStatus(t *testing.T, st *stack.Stack, runID, want string, within time.Duration) map[string]any {
	t.Helper()
	var run map[string]any
	eventually.Succeeds(t, within, "run "+runID+" "+want, func() error {
		code, body := call(t, st, "GET", "/v1/runs/"+runID, token, nil)
		run = body
		if code != 200 || body["status"] != want {
			return fmt.Errorf("HTTP %d status %v", code, body["status"])
		}
		return nil
	})
	return run
}

// listEvents reads every event of a run through the API.
func listEvents(t *testing.T, st *stack.Stack, runID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	after := 0.0
	for {
		code, body := call(t, st, "GET", fmt.Sprintf("/v1/runs/%s/events?after_seq=%d&limit=7", runID, int(after)), token, nil)
		if code != 200 {
			t.Fatalf("events: HTTP %d %v", code, body)
		}
		page, _ := body["events"].([]any)
		for _, e := range page {
			out = append(out, e.(map[string]any))
		}
		if len(page) == 0 {
			return out
		}
		after = body["nextAfterSeq"].(float64)
	}
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

// sandboxDir is a fresh compute directory the bwrap sandbox user can reach
// when the tests run as root: t.TempDir's parent is private (0700), and the
// sandbox user must pass through it.
func sandboxDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil { // #nosec G302 -- search only
		t.Fatal(err)
	}
	return dir
}
