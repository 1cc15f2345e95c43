package loadtool_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/loadtool"
)

// historyChildArg makes the test binary a process the history mode
// measures (TestMain), as `xbot bench --history-child` does the binary.
const historyChildArg = "history-child"

func TestHistoryMeasuresEverySize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, md := filepath.Join(dir, "history.json"), filepath.Join(dir, "perf.md")
	doc := "# Perf\n\n<!-- xbot bench begin -->\nload\n<!-- xbot bench end -->\n\n" +
		"<!-- xbot bench history begin -->\nold\n<!-- xbot bench history end -->\ntail\n"
	if err := os.WriteFile(md, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	o, h := historyFlags(t, "--history", "300,600", "--history-reps", "2", "--history-session", "3", "--json", out,
		"--markdown", md)
	h.ChildCommand = []string{os.Args[0], historyChildArg}
	rep, err := loadtool.RunHistory(context.Background(), o, h, startSystem(t))
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	if len(rep.Sizes) != 2 || len(rep.Fit) == 0 || len(rep.Processes) < 4 {
		t.Fatalf("report has %d sizes, %d fits, %d processes: want 2 sizes, fits and every process", len(rep.Sizes),
			len(rep.Fit), len(rep.Processes))
	}
	for i, s := range rep.Sizes {
		checkSize(t, s, h)
		if i > 0 && s.Events <= rep.Sizes[i-1].Events {
			t.Errorf("size %d: %d events after %d: the history did not grow", i, s.Events, rep.Sizes[i-1].Events)
		}
	}
	for i, s := range rep.Sizes {
		if got := s.SessionRuns; got != 3+2-1 {
			t.Errorf("size %d: the long session has %d runs, want 4 (a new one of 3 less the one timed first, then one per repetition)", i, got)
		}
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var back loadtool.HistoryReport
	if err := json.Unmarshal(raw, &back); err != nil || len(back.Sizes) != 2 {
		t.Errorf("JSON report: %v, %d sizes", err, len(back.Sizes))
	}
	section, _ := os.ReadFile(md)
	if s := string(section); strings.Contains(s, "old") || !strings.Contains(s, "\nload\n") ||
		!strings.HasSuffix(s, "<!-- xbot bench history end -->\ntail\n") || !strings.Contains(s, "| takeover until ready |") {
		t.Errorf("markdown history section not replaced:\n%s", s)
	}
}

// checkSize checks every figure of one size was measured.
func checkSize(t *testing.T, s loadtool.HistorySize, h loadtool.HistoryOptions) {
	t.Helper()
	if s.Events < s.TargetEvents || s.Runs == 0 || s.NotCompleted != 0 || s.BuildSec <= 0 {
		t.Errorf("size %d: %d events, %d runs (%d not completed) in %.1f s", s.TargetEvents, s.Events, s.Runs,
			s.NotCompleted, s.BuildSec)
	}
	for name, smp := range map[string]loadtool.Sample{"takeover assigned": s.TakeoverAssignedMs,
		"takeover ready": s.TakeoverReadyMs, "executor heap": s.ExecutorHeapMB, "executor rss": s.ExecutorRSSMB,
		"executor peak rss": s.ExecutorPeakRSSMB, "fresh run": s.FreshRunMs, "follow-up": s.FollowUpMs,
		"session follow-up": s.SessionFollowUpMs} {
		if len(smp.Values) != h.Reps || smp.Median <= 0 {
			t.Errorf("size %d: %s = %+v, want %d values > 0", s.TargetEvents, name, smp, h.Reps)
		}
	}
	if s.TakeoverReadyMs.Median < s.TakeoverAssignedMs.Median/2 {
		t.Errorf("size %d: ready after %.1f ms, assigned after %.1f ms", s.TargetEvents, s.TakeoverReadyMs.Median,
			s.TakeoverAssignedMs.Median)
	}
	if s.APIHeapIdleMB <= 0 || s.APIHeapStreamMB <= 0 || s.APIRSSMB <= 0 || s.APIPeakRSSMB < s.APIRSSMB || !s.StreamRunLive {
		t.Errorf("size %d: API heap %.1f / %.1f MB, RSS %.1f / %.1f MB, run live %v", s.TargetEvents, s.APIHeapIdleMB,
			s.APIHeapStreamMB, s.APIRSSMB, s.APIPeakRSSMB, s.StreamRunLive)
	}
}

func TestHistoryFlags(t *testing.T) {
	t.Parallel()
	_, h := historyFlags(t, "--history", "10k,100k,1M")
	if want := []int64{10_000, 100_000, 1_000_000}; len(h.Sizes) != 3 || h.Sizes[0] != want[0] || h.Sizes[2] != want[2] {
		t.Errorf("sizes %v, want %v", h.Sizes, want)
	}
	if h.Reps != 3 || h.Session != 100 || !h.Enabled() || h.Validate() != nil {
		t.Errorf("defaults %+v (validate %v)", h, h.Validate())
	}
	_, h = historyFlags(t, "--history", "100k,10k", "--history-reps", "0", "--history-session", "1")
	if err := h.Validate(); err == nil || !strings.Contains(err.Error(), "grow") ||
		!strings.Contains(err.Error(), "--history-reps") || !strings.Contains(err.Error(), "--history-session") {
		t.Errorf("Validate = %v, want every problem", err)
	}
	fs := flag.NewFlagSet("xbot bench", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	(&loadtool.HistoryOptions{}).BindFlags(fs)
	if err := fs.Parse([]string{"--history", "ten"}); err == nil {
		t.Error("--history ten parsed")
	}
}

// historyFlags parses args as `xbot bench` does.
func historyFlags(t *testing.T, args ...string) (loadtool.Options, loadtool.HistoryOptions) {
	t.Helper()
	var o loadtool.Options
	var h loadtool.HistoryOptions
	fs := flag.NewFlagSet("xbot bench", flag.ContinueOnError)
	o.BindFlags(fs)
	h.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o, h
}
