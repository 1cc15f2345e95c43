package agentruntime_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

var update = flag.Bool("update", false, "rewrite the golden events of the recorded logs")

// recorded says what each recorded conversation did (services/systemtest's
// TestRecordRuntimeClientLogs drove it): how its replies ended, how its
// interactions closed, and the input ids of each reply.
var recorded = map[string]struct {
	ends, closes []string
	inputs       [][]string
	errorCode    string
	// admitted, when set, are the inputs admitted, in order.
	admitted []string
}{
	"text_reply": {ends: []string{"completed"}, inputs: [][]string{{"rec-text-1"}}},
	"tools":      {ends: []string{"completed"}, inputs: [][]string{{"rec-tools-1"}}},
	"approvals": {ends: []string{"completed", "completed"}, closes: []string{"answered", "answered"},
		inputs: [][]string{{"rec-approvals-1"}, {"rec-approvals-2"}}},
	"question":            {ends: []string{"completed"}, closes: []string{"answered"}, inputs: [][]string{{"rec-question-1"}}},
	"steer_while_working": {ends: []string{"completed"}, inputs: [][]string{{"rec-steer-1"}}, admitted: []string{"rec-steer-1", "rec-steer-2"}},
	"failed":              {ends: []string{"failed"}, inputs: [][]string{{"rec-failed-1"}}, errorCode: "model_error"},
	"interrupted":         {ends: []string{"cancelled"}, inputs: [][]string{{"rec-interrupted-1"}}},
	"interrupt_with_queued_input": {ends: []string{"cancelled", "completed"}, closes: []string{"withdrawn", "answered"},
		inputs: [][]string{{"rec-queued-1"}, {"rec-queued-2"}}},
	"withdrawn":    {ends: []string{"cancelled"}, closes: []string{"withdrawn"}, inputs: [][]string{{"rec-withdrawn-1"}}},
	"expired":      {ends: []string{"cancelled"}, closes: []string{"expired"}, inputs: [][]string{{"rec-expired-1"}}},
	"sandbox_lost": {ends: []string{"failed", "completed"}, inputs: [][]string{{"rec-lost-1"}, {"rec-lost-2"}}, errorCode: "sandbox_error"},
}

// TestStep1EventMappingFromRecordedLogs is step 1 of the runtime client
// contract's verification: the mapping to the contract's events, tested on
// protocol logs recorded from real conversations (testdata/*.sse, the
// session streams of a whole system with real sandboxes), not hand-written
// payloads. Each log maps to its golden events (testdata/*.events.jsonl;
// -update rewrites them), which follow the rules of a reply's parts
// (contracttests.CheckEvents) and say what the conversation did.
func TestStep1EventMappingFromRecordedLogs(t *testing.T) {
	t.Parallel()
	logs, err := filepath.Glob(filepath.Join("testdata", "*.sse"))
	if err != nil || len(logs) != len(recorded) {
		t.Fatalf("recorded logs %v (%v), want one for each of %d conversations", logs, err, len(recorded))
	}
	for _, path := range logs {
		name := strings.TrimSuffix(filepath.Base(path), ".sse")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			evs := collect(t, replayClient(t, &replay{chunks: readRecording(t, path)}), nil)
			golden(t, strings.TrimSuffix(path, ".sse")+".events.jsonl", encoded(t, evs))
			if err := contracttests.CheckEvents(evs); err != nil {
				t.Error(err)
			}
			want, ok := recorded[name]
			if !ok {
				t.Fatalf("no expectations for the recorded log %s", name)
			}
			checkRecorded(t, evs, want.ends, want.closes, want.inputs, want.errorCode)
			if want.admitted != nil && !slices.Equal(admittedIn(evs), want.admitted) {
				t.Errorf("inputs admitted %v, want %v", admittedIn(evs), want.admitted)
			}
		})
	}
}

func golden(t *testing.T, path string, lines []string) {
	t.Helper()
	got := strings.Join(lines, "\n") + "\n"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil { //nolint:gosec // a test fixture of the repository
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing: run go test -update", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the events of %s differ from %s (go test -update rewrites it):\n%s", filepath.Base(path), path, firstDiff(got, string(want)))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// checkRecorded compares what the events say with what the conversation did.
func checkRecorded(t *testing.T, evs []agentruntime.Event, ends, closes []string, inputs [][]string, code string) {
	t.Helper()
	var gotEnds, gotCloses []string
	var gotInputs [][]string
	var gotCode string
	for _, ev := range evs {
		switch e := ev.(type) {
		case agentruntime.ResponseEnded:
			gotEnds = append(gotEnds, e.Outcome)
			if e.Error != nil && e.Outcome == agentruntime.OutcomeFailed {
				gotCode = e.Error.Code
			}
		case agentruntime.InteractionClosed:
			gotCloses = append(gotCloses, e.Reason)
		case agentruntime.ResponseStarted:
			gotInputs = append(gotInputs, e.InputIDs)
		}
	}
	if !slices.Equal(gotEnds, ends) || !slices.Equal(gotCloses, closes) || gotCode != code ||
		!slices.EqualFunc(gotInputs, inputs, slices.Equal) {
		t.Errorf("replies ended %v (%q), interactions closed %v, replies answered %v; want %v (%q), %v, %v",
			gotEnds, gotCode, gotCloses, gotInputs, ends, code, closes, inputs)
	}
}

func admittedIn(evs []agentruntime.Event) []string {
	var out []string
	for _, ev := range evs {
		if a, ok := ev.(agentruntime.InputAdmitted); ok {
			out = append(out, a.InputID)
		}
	}
	return out
}
