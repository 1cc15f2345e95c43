//go:build chaos

package systemtest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// faultChaos is a chaos system whose Kafka cluster the scenario can inject
// broker-side faults into, and whose executors' logs it can inspect.
type faultChaos struct {
	*chaos
	fake *kfake.Cluster
	logs *observer.ObservedLogs
	// gates holds a file per run of the "held" agent that may go on.
	gates string
}

// newFaultChaos starts the same system as newChaos (front stack with API and
// Postgres projector, the "tooler" agent) on a kfake cluster kept for
// faults; on Apache Kafka it skips t, naming counterpart.
func newFaultChaos(t *testing.T, counterpart string) *faultChaos {
	t.Helper()
	return newFaultChaosOn(t, kafkatest.NewCluster(t, 4).Fake(t, counterpart))
}

// newFaultChaosOn starts the system of newFaultChaos on cl; the caller closes cl.
func newFaultChaosOn(t *testing.T, cl *kafka.Cluster) *faultChaos {
	t.Helper()
	count := filepath.Join(t.TempDir(), "count")
	tool := fmt.Sprintf(`{"command":"basename \"$(dirname \"$TMPDIR\")\" >> %s"}`, count)
	agent := profile.Profile{ID: "tooler", Model: profile.ModelScripted, Tools: []string{"shell"}, Script: []profile.Turn{
		{Text: "Running the tool now.", ChunkChars: 8, Delay: 2 * time.Millisecond, ToolCalls: call1("shell", tool)},
		{Text: "done"},
	}}
	// held is the same agent whose tool call waits, before it counts, until
	// the scenario lets its run go on (release).
	gates := t.TempDir()
	held := agent
	held.ID = "held"
	held.Script = []profile.Turn{agent.Script[0], agent.Script[1]}
	held.Script[0].ToolCalls = call1("shell", fmt.Sprintf(`{"command":"r=$(basename \"$(dirname \"$TMPDIR\")\"); `+
		`while [ ! -e %s/$r ]; do sleep 0.01; done; echo $r >> %s","timeoutSeconds":600}`, gates, count))
	cat, err := profile.NewCatalog(agent, held)
	if err != nil {
		t.Fatal(err)
	}
	comp, err := local.New(local.Config{Dir: t.TempDir(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, kcfg: kafka.Config{Brokers: cl.Addrs(), Partitions: 4}, dsn: pgtest.NewDatabase(t), cat: cat,
		keys: commands.GenerateKeyRing()}
	core, logs := observer.New(zapcore.WarnLevel)
	c := &chaos{env: e, count: count}
	c.opts = func(o *stack.Options) {
		o.Compute = comp
		o.Logger = zap.New(zapcore.NewTee(o.Logger.Core(), core)).Named(o.ExecutorID)
	}
	c.front = c.stack("front", nil, stack.API, stack.ProjectorPostgres)
	return &faultChaos{chaos: c, fake: cl.Fake(), logs: logs, gates: gates}
}

// release lets the runs of the "held" agent among ids go on past their tool
// call's wait.
func (f *faultChaos) release(ids []string) {
	f.t.Helper()
	for _, id := range ids {
		if err := os.WriteFile(filepath.Join(f.gates, id), nil, 0o600); err != nil {
			f.t.Fatal(err)
		}
	}
}

// logged counts warnings and errors whose logger name, message and fields
// contain every one of parts.
func (f *faultChaos) logged(parts ...string) int {
	n := 0
	for _, e := range f.logs.All() {
		s := e.LoggerName + " " + e.Message
		for _, fld := range e.Context {
			s += " " + fmt.Sprint(fld.String, fld.Interface)
		}
		if containsAll(s, parts) {
			n++
		}
	}
	return n
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
