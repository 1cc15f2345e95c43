package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/agentloop"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/scripted"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/executor"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

type harness struct {
	t    *testing.T
	kcfg kafka.Config
	prod *kafka.Producer
	cat  *profile.Catalog
	keys commands.KeyRing
}

func newHarness(t *testing.T, profiles ...profile.Profile) *harness {
	t.Helper()
	kcfg := kafkatest.NewConfig(t, testPartitions)
	prod, err := kafka.NewProducer(kcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	cat, err := profile.NewCatalog(profiles...)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, kcfg: kcfg, prod: prod, cat: cat, keys: commands.GenerateKeyRing()}
}

// startExecutor runs an executor until the test ends or it is killed.
func (h *harness) startExecutor(name string, hooks *kafka.Hooks) *executor.Executor {
	h.t.Helper()
	log := zaptest.NewLogger(h.t, zaptest.Level(zap.WarnLevel)).Named(name)
	ex, err := executor.New(executor.Config{Kafka: h.kcfg, ID: name, Hooks: hooks, CommandKeys: h.keys}, scriptedEngine(log), h.cat, log)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = ex.Run(ctx) }()
	h.t.Cleanup(func() { cancel(); wg.Wait() })
	return ex
}

func (h *harness) send(c commands.Envelope) {
	h.t.Helper()
	if _, err := c.Validate(); err != nil {
		h.t.Fatalf("test built an invalid command: %v", err)
	}
	raw, _ := json.Marshal(c)
	h.produce(c.RunID, raw, h.keys.Sign(c.RunID, raw))
}

// produce writes one record to the commands topic with the default partitioner.
func (h *harness) produce(key string, value []byte, headers map[string]string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.prod.ProduceWithHeaders(ctx, h.kcfg.CommandsTopic(), key, value, headers); err != nil {
		h.t.Fatal(err)
	}
}

// testPartitions is the partition count of the test cluster.
const testPartitions = 4

func createRun(t *testing.T, tenant, key, agent, content string) commands.Envelope {
	t.Helper()
	// Each run has a sandbox key of its own, so runs do not wait for each
	// other (sched_test covers runs sharing a key).
	sk := events.SandboxKey{TenantID: tenant, WorkspaceID: "w", AgentID: agent, OwnerID: "u1-" + key}
	runID := commands.RunIDFor(tenant, key, sk, testPartitions)
	c, err := commands.New(commands.CreateRun, commands.Header{RunID: runID, PlatformSessionID: "sess-1",
		TenantID: tenant, Actor: events.Actor{Type: "user", ID: "u1"}, IdempotencyKey: key},
		commands.CreateRunPayload{AgentID: agent, Input: events.UserInput{Content: content}, SandboxKey: sk})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func cancelRun(t *testing.T, tenant, runID, key string) commands.Envelope {
	t.Helper()
	c, err := commands.New(commands.CancelRun, commands.Header{RunID: runID, PlatformSessionID: "sess-1",
		TenantID: tenant, Actor: events.Actor{Type: "user", ID: "u1"}, IdempotencyKey: key},
		commands.CancelRunPayload{Reason: "user asked"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitFor polls the committed log until cond holds for the folded states.
func (h *harness) waitFor(what string, cond func(map[string]events.RunState) bool) map[string]events.RunState {
	h.t.Helper()
	var states map[string]events.RunState
	eventually.Succeeds(h.t, 20*time.Second, what, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		states = contracttests.LogInvariant(ctx, h.t, contracttests.KafkaSource(h.kcfg))
		if cond(states) {
			return nil
		}
		return fmt.Errorf("states: %s", describe(states))
	})
	return states
}

func describe(states map[string]events.RunState) string {
	out := ""
	for _, id := range contracttests.RunIDs(states) {
		out += fmt.Sprintf("\n  %s %s seq=%d pending=%d", id, states[id].CurrentStatus(), states[id].LastSeq, len(states[id].Pending))
	}
	return out
}

func statusIs(runID string, s events.Status) func(map[string]events.RunState) bool {
	return func(m map[string]events.RunState) bool { return m[runID].Status == s }
}

// scriptedEngine is the agent loop on the scripted model, without a sandbox.
func scriptedEngine(log *zap.Logger) executor.Engine {
	return engineOn(func(p profile.Profile) model.Provider { return scripted.New(p.Script) }, log)
}

// engineOn is the agent loop with the builtin tools, without a sandbox, on
// the model that provider gives each profile.
func engineOn(provider func(profile.Profile) model.Provider, log *zap.Logger) executor.Engine {
	return agentloop.New(agentloop.Config{
		Models: func(p profile.Profile) (model.Provider, string, error) {
			return provider(p), profile.ModelScripted, nil
		},
		Tools: tools.Builtin(tools.Options{}), Log: log,
	})
}
