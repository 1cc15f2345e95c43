package agentruntime_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// TestStep2CursorDeterminism is step 2 of the runtime client contract's
// verification: from every event's cursor of every recorded log, reading
// again — by the same reader or another, over connections that drop every
// few chunks — yields exactly the events that followed it, their cursors
// included.
func TestStep2CursorDeterminism(t *testing.T) {
	t.Parallel()
	logs, err := filepath.Glob(filepath.Join("testdata", "*.sse"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("recorded logs %v %v", logs, err)
	}
	for _, path := range logs {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".sse"), func(t *testing.T) {
			t.Parallel()
			steady, flaky := &replay{chunks: readRecording(t, path)}, &replay{chunks: readRecording(t, path)}
			flaky.setDrop(3)
			readers := []*agentruntime.Client{replayClient(t, steady), replayClient(t, flaky)}
			all := encoded(t, collect(t, readers[0], nil))
			if again := encoded(t, collect(t, readers[1], nil)); !slices.Equal(again, all) {
				t.Fatalf("a second reader over a flaky connection read %d events, the first %d", len(again), len(all))
			}
			evs := collect(t, readers[0], nil)
			for i, ev := range evs {
				cur := ev.Cursor()
				if got := encoded(t, collect(t, readers[i%2], &cur)); !slices.Equal(got, all[i+1:]) {
					t.Fatalf("after event %d (%s) reader %d read %d events, want the %d after it", i, agentruntime.Name(ev), i%2, len(got), len(all)-i-1)
				}
			}
		})
	}
}

// TestCursorsOfAnotherConversationAreExpired: a cursor of another session,
// or one this package did not issue, cannot be continued from.
func TestCursorsOfAnotherConversationAreExpired(t *testing.T) {
	t.Parallel()
	r := &replay{chunks: readRecording(t, filepath.Join("testdata", "text_reply.sse"))}
	rc := replayClient(t, r)
	for name, cur := range map[string]agentruntime.Cursor{
		"another session":    {Generation: "xbot/session/elsewhere", Position: json.RawMessage(`{"after":"run_x:1"}`)},
		"not a position":     {Generation: "xbot/session/" + session, Position: json.RawMessage(`"?"`)},
		"an unknown chunk":   {Generation: "xbot/session/" + session, Position: json.RawMessage(`{"after":"run_unknown:9"}`)},
		"a negative skip":    {Generation: "xbot/session/" + session, Position: json.RawMessage(`{"after":"run_x:1","skip":-1}`)},
		"no position at all": {Generation: "xbot/session/" + session},
	} {
		var last error
		for _, err := range rc.Events(t.Context(), &cur) {
			last = err
		}
		if !errors.Is(last, agentruntime.ErrCursorExpired) {
			t.Errorf("%s: %v, want ErrCursorExpired", name, last)
		}
		if err := rc.Committed(t.Context(), cur); name == "another session" && !errors.Is(err, agentruntime.ErrCursorExpired) {
			t.Errorf("committed of %s: %v", name, err)
		}
	}
}
