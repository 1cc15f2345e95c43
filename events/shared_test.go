package events_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

// TestFoldSharedKeepsWhatTheEngineReads: FoldShared folds as Fold does and
// returns the envelope of an event that opens the run or changes an item
// with its decoded payload kept, which SharedPayload then returns without
// decoding again; other events decode afresh each time, and no encoding of
// the envelope changes.
func TestFoldSharedKeepsWhatTheEngineReads(t *testing.T) {
	t.Parallel()
	l := eventstest.New(t, events.Identity{RunID: "run_01JB0000000000000000000001", TenantID: "acme"})
	l.Accepted("cmd_1", events.RunAcceptedPayload{AgentID: "coder", Input: events.UserInput{Content: "hi"}})
	l.Started("exec-1")
	l.Response("itm_1", events.AssistantData{FinishReason: "stop"}, "Hel", "lo")
	l.Completed("done")

	var plain, shared events.RunState
	for _, e := range l.Events() {
		var err error
		if plain, err = events.Fold(plain, e); err != nil {
			t.Fatal(err)
		}
		var kept events.Envelope
		if shared, kept, err = events.FoldShared(shared, e); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(plain, shared) {
			t.Fatalf("after %s: FoldShared's state differs from Fold's", e.Type)
		}
		before, _ := json.Marshal(e)
		after, _ := json.Marshal(kept)
		if string(before) != string(after) || string(kept.AppendJSON(nil)) != string(before) {
			t.Fatalf("%s: the kept envelope encodes as %s, want %s", e.Type, after, before)
		}

		first, err := kept.SharedPayload()
		if err != nil {
			t.Fatal(err)
		}
		again, _ := kept.SharedPayload()
		fresh, _ := e.DecodePayload()
		if !reflect.DeepEqual(first, fresh) {
			t.Fatalf("%s: shared payload %+v, decoded %+v", e.Type, first, fresh)
		}
		keeps := e.Type == events.RunAccepted || e.Type == events.ItemStarted || e.Type == events.ItemCompleted
		if same := reflect.ValueOf(first).Pointer() == reflect.ValueOf(again).Pointer(); same != keeps {
			t.Errorf("%s: the payload is kept: %v, want %v", e.Type, same, keeps)
		}
	}
}
