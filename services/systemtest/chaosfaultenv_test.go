//go:build chaos

package systemtest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/stack"
)

// faultChaos is a chaos system whose Kafka cluster the scenario can inject
// broker-side faults into, and whose executors' logs it can inspect.
type faultChaos struct {
	*chaos
	fake *kfake.Cluster
	logs *observer.ObservedLogs
}

// newFaultChaos starts the same system as newChaos (front stack with API and
// Postgres projector, the chaos agents) on a kfake cluster kept for faults;
// on Apache Kafka it skips t, naming counterpart.
func newFaultChaos(t *testing.T, counterpart string) *faultChaos {
	t.Helper()
	return newFaultChaosOn(t, kafkatest.NewCluster(t, 4).Fake(t, counterpart))
}

// newFaultChaosOn starts the system of newFaultChaos on cl; the caller closes cl.
func newFaultChaosOn(t *testing.T, cl *kafka.Cluster) *faultChaos {
	t.Helper()
	c := newChaosAgents(&env{t: t, kcfg: kafka.Config{Brokers: cl.Addrs(), Partitions: 4}, dsn: pgtest.NewDatabase(t),
		keys: commands.GenerateKeyRing()})
	comp, err := local.New(local.Config{Dir: t.TempDir(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	c.opts = func(o *stack.Options) {
		o.Compute = comp
		o.Logger = zap.New(zapcore.NewTee(o.Logger.Core(), core)).Named(o.ExecutorID)
	}
	c.front = c.stack("front", nil, stack.API, stack.ProjectorPostgres)
	return &faultChaos{chaos: c, fake: cl.Fake(), logs: logs}
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
