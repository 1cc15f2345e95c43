package events_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
)

func refs(n int, status string) []events.ItemRef {
	out := make([]events.ItemRef, n)
	for i := range out {
		out[i] = events.ItemRef{ID: fmt.Sprintf("itm_%d", i), Type: events.ItemToolCall, Status: status}
	}
	return out
}

// TestItemListRoundTripsThroughJSON: a list encodes as the array of its
// items, decodes back equal, and an empty one is left out of a run state.
func TestItemListRoundTripsThroughJSON(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 31, 32, 33, 100} {
		items := refs(n, events.ItemStatusStarted)
		raw, err := json.Marshal(events.RunState{RunID: "run_1", Items: events.ItemsOf(items...)})
		if err != nil {
			t.Fatal(err)
		}
		var flat struct {
			Items *[]events.ItemRef `json:"items"`
		}
		if err := json.Unmarshal(raw, &flat); err != nil {
			t.Fatal(err)
		}
		if n == 0 && flat.Items != nil {
			t.Errorf("an empty list is encoded: %s", raw)
		}
		if n > 0 && (flat.Items == nil || !slices.Equal(*flat.Items, items)) {
			t.Errorf("%d items encode as %s", n, raw)
		}
		var back events.RunState
		if err := events.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if got := back.Items.Slice(); back.Items.Len() != n || !slices.Equal(got, items) {
			t.Errorf("%d items decode as %d: %v", n, back.Items.Len(), got)
		}
	}
}

// TestAFoldChangesItsOwnItemsOnly: two folds from one state, across a
// chunk's boundary, each see only their own item events; the state they
// came from is unchanged.
func TestAFoldChangesItsOwnItemsOnly(t *testing.T) {
	t.Parallel()
	id := events.Identity{RunID: "run_items", TenantID: "acme"}
	l := eventstest.New(t, id).
		Accepted("cmd_1", events.RunAcceptedPayload{AgentID: "a", IdempotencyKey: "k-1", Actor: events.Actor{Type: "user", ID: "u"}}).
		Started("ex-1")
	for i := range 32 { // a full chunk
		l.ItemStarted(fmt.Sprintf("itm_%d", i), events.ItemToolCall, nil)
	}
	base := l.State()
	before := base.Items.Slice()
	seq := base.LastSeq
	fold := func(item string, typ events.Type, p any) events.RunState {
		t.Helper()
		e, err := events.Draft{Type: typ, ItemID: item, Payload: p}.Seal(id, seq+1, events.NewID("evt"), 1)
		if err != nil {
			t.Fatal(err)
		}
		st, err := events.Fold(base, e)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a := fold("itm_a", events.ItemStarted, events.ItemStartedPayload{ItemType: events.ItemToolCall})
	b := fold("itm_b", events.ItemStarted, events.ItemStartedPayload{ItemType: events.ItemToolCall})
	c := fold("itm_0", events.ItemCompleted, events.ItemCompletedPayload{ItemType: events.ItemToolCall, Status: events.ItemStatusCompleted})
	if got := a.Items.At(32).ID; a.Items.Len() != 33 || got != "itm_a" {
		t.Errorf("fork a: %d items, the 33rd %q", a.Items.Len(), got)
	}
	if got := b.Items.At(32).ID; b.Items.Len() != 33 || got != "itm_b" {
		t.Errorf("fork b: %d items, the 33rd %q", b.Items.Len(), got)
	}
	if got, _ := c.Item("itm_0"); got.Status != events.ItemStatusCompleted {
		t.Errorf("fork c: itm_0 is %s", got.Status)
	}
	if got, _ := a.Item("itm_0"); got.Status != events.ItemStatusStarted {
		t.Errorf("fork a sees fork c's completion: itm_0 is %s", got.Status)
	}
	if !slices.Equal(base.Items.Slice(), before) {
		t.Errorf("the state the forks came from changed: %v", base.Items.Slice())
	}
}
