package loadtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/loadtool"
	"github.com/xbot-runtime/xbot/services/stack"
)

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == historyChildArg { // a process the history mode measures
		if err := loadtool.RunHistoryChild(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "history child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(pgtest.Run(chtest.Wrap(kafkatest.Wrap(m))))
}

// startSystem is a Starter of a whole system on the test servers, tools on
// the local provider, like `xbot bench` starts one on embedded servers.
func startSystem(t *testing.T) loadtool.Starter {
	t.Helper()
	ch := chtest.NewDatabase(t) // skips when ClickHouse is missing, unless CI is set
	return func(ctx context.Context, configure func(*stack.Options) error) (loadtool.System, error) {
		cat, err := profile.NewCatalog()
		if err != nil {
			return loadtool.System{}, err
		}
		comp, err := stack.NewCompute(stack.Compute{Provider: "local", Dir: t.TempDir(), Logger: zap.NewNop(),
			PerTenant: 1000, Total: 1000})
		if err != nil {
			return loadtool.System{}, err
		}
		opts := stack.Options{Kafka: kafkatest.NewTopics(t, 3), PGDSN: pgtest.NewDatabase(t), APIAddr: "127.0.0.1:0",
			Profiles: cat, Logger: zap.NewNop(), ClickHouse: &ch, Compute: comp, Version: "test",
			WaitDefault: time.Second, WaitMax: time.Second}
		if err := configure(&opts); err != nil {
			return loadtool.System{}, err
		}
		st, err := stack.Start(ctx, opts)
		if err != nil {
			return loadtool.System{}, err
		}
		t.Cleanup(func() { st.Stop(context.Background()) })
		eventually.Holds(t, 30*time.Second, "system ready", func() bool {
			return st.Healthy(ctx) == nil && len(st.Executor.Partitions()) > 0
		})
		return loadtool.System{Stack: st, Servers: "test servers"}, nil
	}
}

func TestBenchReportsEveryFigure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, md := filepath.Join(dir, "bench.json"), filepath.Join(dir, "perf.md")
	if err := os.WriteFile(md, []byte("# Perf\n\n<!-- xbot bench begin -->\nold\n<!-- xbot bench end -->\ntail\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var o loadtool.Options
	fs := flag.NewFlagSet("xbot bench", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--runs", "5", "--concurrency", "2", "--turns", "2", "--json", out, "--markdown", md}); err != nil {
		t.Fatal(err)
	}
	rep, err := loadtool.Run(context.Background(), o, startSystem(t))
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	if rep.Config.Version != "test" || rep.Config.Servers != "test servers" {
		t.Errorf("config %+v: want the system's version and servers", rep.Config)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"runs.completed", "runs.runsPerSec", "runs.events", "runs.eventsPerSec",
		"latencyMs.accepted.p50", "latencyMs.accepted.p99", "latencyMs.firstChunk.p50", "latencyMs.firstChunk.p95",
		"latencyMs.completed.p50", "latencyMs.completed.p99", "projectorLag.samples",
		"baselines.kafkaTransactionalProduce.eventsPerSec", "baselines.postgresCopyFrom.eventsPerSec",
		"baselines.clickhouseBatchInsert.eventsPerSec",
		"metrics.transactions", "metrics.recordsPerTransaction", "metrics.commitMs.p50", "metrics.commitMs.p99",
		"metrics.poolAcquires", "metrics.poolMaxConns"} {
		if v, _ := lookup(doc, path).(float64); v <= 0 {
			t.Errorf("%s = %v, want > 0", path, lookup(doc, path))
		}
	}
	if v, _ := lookup(doc, "runs.failed").(float64); v != 0 {
		t.Errorf("runs.failed = %v", v)
	}
	for _, path := range []string{"projectorLag.max.postgres", "projectorLag.end.postgres", "projectorLag.max.clickhouse"} {
		if _, ok := lookup(doc, path).(float64); !ok {
			t.Errorf("%s missing", path)
		}
	}
	section, _ := os.ReadFile(md)
	if s := string(section); strings.Contains(s, "old") || !strings.HasPrefix(s, "# Perf\n\n<!-- xbot bench begin -->") ||
		!strings.HasSuffix(s, "<!-- xbot bench end -->\ntail\n") || !strings.Contains(s, "| runs/s |") {
		t.Errorf("markdown section not replaced:\n%s", s)
	}
}

func TestRunRefusesBadOptionsAndAStarterThatSkipsConfigure(t *testing.T) {
	t.Parallel()
	started := false
	_, err := loadtool.Run(context.Background(), loadtool.Options{Runs: 0, Tool: "python"},
		func(context.Context, func(*stack.Options) error) (loadtool.System, error) {
			started = true
			return loadtool.System{}, nil
		})
	if err == nil || started || !strings.Contains(err.Error(), "--runs") || !strings.Contains(err.Error(), `--tool "python"`) {
		t.Errorf("Run with bad options = %v (started %v), want both problems before any start", err, started)
	}
	fs := flag.NewFlagSet("xbot bench", flag.ContinueOnError)
	var o loadtool.Options
	o.BindFlags(fs)
	_, err = loadtool.Run(context.Background(), o, func(context.Context, func(*stack.Options) error) (loadtool.System, error) {
		return loadtool.System{Stack: &stack.Stack{}}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "configure") {
		t.Errorf("Run with a starter that skips configure = %v", err)
	}
	boom := errors.New("no system")
	_, err = loadtool.Run(context.Background(), o, func(context.Context, func(*stack.Options) error) (loadtool.System, error) {
		return loadtool.System{}, boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Run with a failing starter = %v, want its error", err)
	}
}

func lookup(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}
