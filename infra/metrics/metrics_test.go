package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

func TestEndpointServesTheTextFormat(t *testing.T) {
	t.Parallel()
	srv, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	metrics.ObserveTransaction(3, 5, time.Now())
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+srv.Addr()+metrics.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, ct)
	}
	fams, err := metrics.Scrape(context.Background(), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if h := fams.Histogram("xbot_kafka_transaction_records", "partition", "3"); h.Count == 0 || h.Sum < 5 {
		t.Errorf("the scraped histogram has %d samples summing to %g, want at least the one of 5 records", h.Count, h.Sum)
	}
	for _, want := range []string{
		"# TYPE xbot_kafka_transaction_seconds histogram",
		`xbot_kafka_transaction_records_bucket{partition="3",le="8"}`,
		"# TYPE go_goroutines gauge",
		"# TYPE process_cpu_seconds_total counter",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the scrape lacks %q", want)
		}
	}
}

func TestListenOnATakenAddressSaysSo(t *testing.T) {
	t.Parallel()
	first, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Close(context.Background()) })
	_, err = metrics.Listen(first.Addr())
	if !errors.Is(err, metrics.ErrAddrInUse) || !strings.Contains(err.Error(), "metrics_addr") {
		t.Fatalf("err = %v, want ErrAddrInUse naming metrics_addr", err)
	}
}

func TestLabelValuesStayBounded(t *testing.T) {
	t.Parallel()
	start := time.Now()
	for i := range 500 {
		metrics.ObserveToolCall(fmt.Sprintf("bounded_test_tool_%d", i), start)
		metrics.ObserveRequest(fmt.Sprintf("GET /bounded/%d", i), 200+i%3, start)
		metrics.ObserveStage(fmt.Sprintf("stage-%d", i), start)
		metrics.CountReadRetry(fmt.Sprintf("bounded-test-topic-%d", i))
	}
	closed, _ := metrics.StreamOpened("run 0b1c")
	closed()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// Each cap, plus "other"; routes times the three codes.
	limits := map[string]int{"xbot_tool_call_seconds": 64 + 1, "xbot_http_request_seconds": (128 + 1) * 3,
		"xbot_engine_stage_seconds": 3 + 1, "xbot_sse_clients": 2 + 1, "xbot_kafka_read_retries_total": 16 + 1}
	for _, f := range families {
		limit, ok := limits[f.GetName()]
		if !ok {
			continue
		}
		if n := len(f.GetMetric()); n > limit {
			t.Errorf("%s has %d series, want at most %d", f.GetName(), n, limit)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "0b1c") {
					t.Errorf("%s carries the free-text label value %q", f.GetName(), l.GetValue())
				}
			}
		}
	}
}
