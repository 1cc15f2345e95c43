package agentloop

import (
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

func TestAnalyzeDecidesTheNextStage(t *testing.T) {
	t.Parallel()
	const run = "run_01J000000000000000000000R1"
	t.Run("fresh run asks the model", func(t *testing.T) {
		pr := analyze(newLog(t, run, "hi", "").Events())
		if pr.last != nil || pr.turns != 0 || pr.final() || pr.startedAt == 0 {
			t.Errorf("fresh run: %+v", pr)
		}
	})
	t.Run("calls without items are unstarted, in call order", func(t *testing.T) {
		b := newLog(t, run, "hi", "").response(r1, "", 0, callLs, callCat, callBad)
		b.toolOK(r1, callCat, "x")
		pr := analyze(b.Events())
		if len(pr.unstarted) != 2 || pr.unstarted[0].ID != callLs.ID || pr.unstarted[1].ID != callBad.ID {
			t.Errorf("unstarted = %+v, want call_1 and call_3", pr.unstarted)
		}
		if pr.toolCalls != 1 || pr.turns != 1 {
			t.Errorf("toolCalls %d turns %d, want 1 and 1", pr.toolCalls, pr.turns)
		}
	})
	t.Run("a lost model call is not a turn", func(t *testing.T) {
		b := newLog(t, run, "hi", "")
		b.ItemStarted(r1, events.ItemAssistantMessage, nil).ItemFailed(r1, events.ItemAssistantMessage, events.FailRuntimeLost, "")
		if pr := analyze(b.Events()); pr.turns != 0 || pr.last != nil {
			t.Errorf("after a lost call: %+v", pr)
		}
	})
	t.Run("an answer is final until input follows it", func(t *testing.T) {
		b := newLog(t, run, "hi", "").response(r1, "done", 0)
		if pr := analyze(b.Events()); !pr.final() || pr.last.text != "done" {
			t.Errorf("answer not final: %+v", pr)
		}
		b.steer("itm_01J00000000000000000000S1A", "one more thing")
		if pr := analyze(b.Events()); pr.final() {
			t.Error("a steer after the answer must lead to another model call")
		}
	})
	t.Run("results in means another model call", func(t *testing.T) {
		b := newLog(t, run, "hi", "").response(r1, "", 0, callLs)
		b.toolFail(r1, callLs, events.ToolErrRuntimeLost, "lost")
		if pr := analyze(b.Events()); pr.final() || len(pr.unstarted) != 0 {
			t.Errorf("after results: %+v", pr)
		}
	})
}

// TestAnalysisKeptAcrossCallsEqualsAnalyze: the analysis an execution keeps
// from call to call gives, at every length of a growing log, what analyzing
// the whole log gives; also when the log read is shorter than the last one
// (read again from the start).
func TestAnalysisKeptAcrossCallsEqualsAnalyze(t *testing.T) {
	t.Parallel()
	const run = "run_01J000000000000000000000R1"
	b := newLog(t, run, "hi", "")
	b.response(r1, "first", 0, callLs, callCat)
	ls := b.startTool(r1, callLs, events.ItemCommandExecution) // open while the next ones close
	b.toolOK(r1, callCat, "x")
	b.ToolCompleted(ls, events.ItemCommandExecution, callLs, events.ToolResultData{Output: "README.md"})
	b.steer("itm_01J00000000000000000000S1A", "and then?")
	b.At(b.Now() + 5_000).Paused(events.PauseAwaitingUserInput).At(b.Now() + 60_000).Resumed("")
	b.ItemStarted(r2, events.ItemAssistantMessage, nil).ItemFailed(r2, events.ItemAssistantMessage, events.FailRuntimeLost, "")
	b.response(r3, "second", 1, callAsk, callLost, callBad)
	b.toolFail(r3, callLost, events.ToolErrRuntimeLost, "lost")
	b.startTool(r3, callAsk, events.ItemToolCall) // left open
	b.response("itm_01J0000000000000000000004A", "done", 2)
	evs := b.Events()

	var f itemFold
	var a analysis
	check := func(n int) {
		t.Helper()
		f.add(evs[:n])
		got := a.at(&f, evs[:n])
		var fresh itemFold
		fresh.add(evs[:n])
		if want := analyzeItems(fresh.order, evs[:n]); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d events: kept %+v, whole %+v", n, got, want)
		}
	}
	for n := 1; n <= len(evs); n++ {
		check(n)
	}
	check(len(evs) / 2) // read again, shorter
	for n := len(evs) / 2; n <= len(evs); n++ {
		check(n)
	}
	if a.settled == 0 || a.settled == len(f.order) {
		t.Errorf("%d of %d items settled: the open call must stop the prefix, the ones before it not", a.settled, len(f.order))
	}
}
