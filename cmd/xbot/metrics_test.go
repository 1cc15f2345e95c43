package main_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/metrics"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// metricsAddr is a free loopback address for a process's /metrics.
func metricsAddr(t *testing.T) string {
	t.Helper()
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", port)
}

// scrape reads a process's /metrics, waiting for the process to listen.
func scrape(t *testing.T, addr string) metrics.Families {
	t.Helper()
	var fams metrics.Families
	eventually.Succeeds(t, 30*time.Second, "scrape "+addr, func() error {
		var err error
		fams, err = metrics.Scrape(context.Background(), addr)
		return err
	})
	return fams
}

// followToDone reads the run's UI stream to its end.
func followToDone(t *testing.T, api, token, runID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := apiAt(t, api, token).FollowRun(ctx, runID, "", func(client.StreamEvent) error { return nil }); err != nil {
		t.Fatalf("follow run %s: %v", runID, err)
	}
}

// assertRunMetrics checks that a run that went through the process moved
// every part's metrics, and that no label carries the run's id.
func assertRunMetrics(t *testing.T, fams metrics.Families, runID string) {
	t.Helper()
	for _, name := range []string{"xbot_kafka_transaction_seconds", "xbot_kafka_transaction_records",
		"xbot_engine_stage_seconds", "xbot_model_call_seconds", "xbot_projector_batch_records", "xbot_http_request_seconds"} {
		if h := fams.Histogram(name); h.Count == 0 {
			t.Errorf("%s has no samples after a run", name)
		}
	}
	if h := fams.Histogram("xbot_engine_stage_seconds", "stage", metrics.StageFinish); h.Count == 0 {
		t.Error("the run's finish stage was not timed")
	}
	if h := fams.Histogram("xbot_http_request_seconds", "route", "POST /v1/runs", "code", "202"); h.Count == 0 {
		t.Error(`no "POST /v1/runs" request answered 202 was timed`)
	}
	if v := fams.Value("xbot_sse_bytes_total", "stream", metrics.StreamRun); v <= 0 {
		t.Errorf("xbot_sse_bytes_total{stream=run} = %g after a followed stream", v)
	}
	// The process's one Postgres pool: its size, and the acquires the run's
	// reads and projections made.
	if v := fams.Value("pgxpool_max_conns", "pool", "1"); v < 1 {
		t.Errorf("pgxpool_max_conns{pool=1} = %g", v)
	}
	if v := fams.Value("pgxpool_acquire_count", "pool", "1"); v < 1 {
		t.Errorf("pgxpool_acquire_count{pool=1} = %g after a run", v)
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("the scrape lacks %s", name)
		}
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), runID) {
					t.Errorf("%s{%s=%q} carries the run id", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestDevServesMetricsThatMoveWithARun also turns tracing on with the
// standard variables and checks that the spans reach the OTLP endpoint.
func TestDevServesMetricsThatMoveWithARun(t *testing.T) {
	bin := build(t)
	kport, _ := devstack.FreePort()
	aport, _ := devstack.FreePort()
	maddr := metricsAddr(t)
	var traces atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/traces" && r.Header.Get("Content-Type") == "application/x-protobuf" {
			traces.Add(1)
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL, "OTEL_BSP_SCHEDULE_DELAY=100"}
	dev := start(t, bin, env, "dev", "--dev-kafka-addr", fmt.Sprintf("127.0.0.1:%d", kport),
		"--api-addr", fmt.Sprintf("127.0.0.1:%d", aport), "--metrics-addr", maddr, "--im-addr", "127.0.0.1:0")
	m := dev.waitFor(t, regexp.MustCompile(`xbot dev ready: api=(\S+) kafka=(\S+) token=(\S+)`), 60*time.Second)
	api, token := m[1], m[3]
	before := scrape(t, maddr)
	runID := createAndComplete(t, api, token)
	followToDone(t, api, token, runID)
	after := scrape(t, maddr)
	assertRunMetrics(t, after, runID)
	txns := after.Histogram("xbot_kafka_transaction_records").Minus(before.Histogram("xbot_kafka_transaction_records"))
	if txns.Count == 0 || txns.Sum < float64(txns.Count) {
		t.Errorf("the run's transactions: %d holding %g records", txns.Count, txns.Sum)
	}
	// Once the views applied the run, their lag reads 0 again.
	eventually.Succeeds(t, 30*time.Second, "the views' lag returns to 0", func() error {
		fams, err := metrics.Scrape(context.Background(), maddr)
		if err != nil {
			return err
		}
		for _, view := range []string{"postgres", "clickhouse", "im"} {
			if lag := fams.Value("xbot_projector_lag_records", "view", view); lag != 0 {
				return fmt.Errorf("%s lag %g", view, lag)
			}
		}
		return nil
	})
	dev.stop(t) // sends the spans still buffered
	if traces.Load() == 0 {
		t.Error("no spans reached the OTLP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT")
	}
}

func TestAComponentRefusesATakenMetricsAddress(t *testing.T) {
	bin := build(t)
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	env := []string{"XBOT_KAFKA_BROKERS=127.0.0.1:1", "XBOT_METRICS_ADDR=" + ln.Addr().String(),
		"XBOT_COMMAND_SIGNING_KEY=" + commands.FormatKey(commands.GenerateKeyRing().Current())}
	p := start(t, bin, env, "executor")
	if err := p.cmd.Wait(); err == nil {
		t.Fatal("the executor started on a taken metrics address")
	}
	if out := p.out.String(); !strings.Contains(out, "address already in use") || !strings.Contains(out, "metrics_addr") {
		t.Fatalf("the error does not say the metrics address is taken:\n%s", out)
	}
}

// assertSplitMetrics checks each split component's /metrics after runs went
// through: the executors timed their transactions, the projector its
// batches, the API its requests.
func assertSplitMetrics(t *testing.T, addrs map[string]string) {
	t.Helper()
	fams := map[string]metrics.Families{}
	for name, addr := range addrs {
		fams[name] = scrape(t, addr)
	}
	txns := fams["ex1"].Histogram("xbot_kafka_transaction_records").Count +
		fams["ex2"].Histogram("xbot_kafka_transaction_records").Count
	if txns == 0 {
		t.Error("no executor timed a transaction")
	}
	if fams["proj"].Histogram("xbot_projector_batch_records", "view", "postgres").Count == 0 {
		t.Error("the projector recorded no batch")
	}
	if fams["api"].Histogram("xbot_http_request_seconds", "route", "POST /v1/runs").Count == 0 {
		t.Error("the API timed no create")
	}
	for _, name := range []string{"api", "proj"} {
		if v := fams[name].Value("pgxpool_acquire_count", "pool", "1"); v < 1 {
			t.Errorf("%s: pgxpool_acquire_count{pool=1} = %g", name, v)
		}
	}
	if _, ok := fams["api"]["xbot_kafka_transaction_seconds"]; ok && fams["api"].Histogram("xbot_kafka_transaction_seconds").Count > 0 {
		t.Error("the API process reports transactions it does not write")
	}
}
