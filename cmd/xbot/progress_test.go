package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/progress"
	"github.com/xbot-runtime/xbot/projections/runner"
)

func TestProgressLine(t *testing.T) {
	t.Parallel()
	got := progressLine("postgres", runner.Progress{Done: 12345, Total: 27000, Elapsed: 2 * time.Second})
	want := "postgres [##########..............]  46% 12,345/27,000 events 6,172 events/s ETA 2s"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	done := progressLine("im", runner.Progress{Done: 5, Total: 5, Elapsed: 1500 * time.Millisecond, Finished: true})
	if !strings.Contains(done, "100%") || !strings.Contains(done, "done in 1.5s") {
		t.Errorf("finished line %q", done)
	}
}

func TestProgressPrinterWithoutTerminalPrintsPlainLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := &progressPrinter{p: progress.NewPlain(&buf, time.Hour), what: "clickhouse"}
	p.report(runner.Progress{Done: 1, Total: 10, Elapsed: time.Second})
	p.report(runner.Progress{Done: 2, Total: 10, Elapsed: time.Second}) // within "every": not printed
	p.report(runner.Progress{Done: 10, Total: 10, Elapsed: time.Second, Finished: true})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || strings.Contains(buf.String(), "\r") {
		t.Errorf("plain output %q, want 2 lines without carriage returns", buf.String())
	}
}
