package executor

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

func TestFinishedIndexRoundTrips(t *testing.T) {
	refs := map[string]finishedRef{"run_a": {offset: 7, endedAt: 1700000000000}, "run_b": {offset: 0, endedAt: 1}}
	got := map[string]finishedRef{}
	if err := decodeIndex(encodeIndex([]string{"run_a", "run_b"}, refs), func(id string, r finishedRef) { got[id] = r }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["run_a"] != refs["run_a"] || got["run_b"] != refs["run_b"] {
		t.Fatalf("decoded %v, want %v", got, refs)
	}
	if err := decodeIndex([]byte("run_a 7\n"), func(string, finishedRef) {}); err == nil {
		t.Fatal("a line without its end time decoded")
	}
}

// TestPartitionMetaEncodesAsJSONMarshal: jsonMeta's output is json.Marshal's
// with the lagging field false, and decodes to the meta it encoded; an
// executor that knew only the list of lagging runs refuses it; such a list,
// as older executors wrote it, still decodes.
func TestPartitionMetaEncodesAsJSONMarshal(t *testing.T) {
	from := int64(1 << 40)
	for _, m := range []partitionMeta{
		{NextCommand: 5, EventsEnd: -1, BaseFrom: 1, NextOrder: 9},
		{NextCommand: 1 << 40, EventsEnd: 77, LagFrom: &from},
	} {
		raw, err := jsonMeta(m)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(struct {
			partitionMeta
			Lagging bool `json:"lagging"`
		}{partitionMeta: m})
		if err != nil || string(raw) != string(want) {
			t.Errorf("jsonMeta = %s, json.Marshal = %s %v", raw, want, err)
		}
		var back partitionMeta
		if err := events.Unmarshal(raw, &back); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if back.NextCommand != m.NextCommand || back.EventsEnd != m.EventsEnd || back.BaseFrom != m.BaseFrom ||
			back.NextOrder != m.NextOrder || (back.LagFrom == nil) != (m.LagFrom == nil) ||
			m.LagFrom != nil && *back.LagFrom != *m.LagFrom || back.Lagging != nil {
			t.Errorf("%s decodes to %+v, want %+v", raw, back, m)
		}
		var older struct {
			NextCommand int64          `json:"nextCommand"`
			Lagging     map[string]lag `json:"lagging"`
		}
		if err := events.Unmarshal(raw, &older); err == nil {
			t.Errorf("an executor that knows only the list of lagging runs reads %s as %+v", raw, older)
		}
	}
	var listed partitionMeta
	if err := events.Unmarshal([]byte(`{"nextCommand":3,"lagging":{"run_a":{"from":7,"seq":2}}}`), &listed); err != nil ||
		!maps.Equal(listed.Lagging, legacyLagging{"run_a": {From: 7, Seq: 2}}) || listed.LagFrom != nil {
		t.Errorf("an older executor's meta decodes to %+v, %v", listed, err)
	}
}

// The later record of a key wins, a summary moves a run to the finished
// index with its record's offset, and a tombstone forgets it.
func TestRestoredAppliesRecordsInOrder(t *testing.T) {
	rec := func(off int64, key string, st events.RunState) kafka.Record {
		raw, err := encodeCheckpoint(runCheckpoint{State: st})
		if err != nil {
			t.Fatal(err)
		}
		return kafka.Record{Offset: off, Key: key, Value: raw}
	}
	running := events.RunState{RunID: "run_a", Status: events.StatusRunning, LastSeq: 3, Input: events.UserInput{Content: "hi"}}
	done := running
	done.Status, done.UpdatedAt = events.StatusCompleted, 99
	meta, _ := json.Marshal(partitionMeta{NextCommand: 5, BaseFrom: 1})
	rs := newRestored()
	for _, r := range []kafka.Record{
		rec(1, "run_a", running), rec(2, "run_b", running), {Offset: 3, Key: metaKey, Value: meta},
		rec(4, "run_a", done), {Offset: 5, Key: "run_b"}, {Offset: 6, Key: indexKey(0), Value: encodeIndex([]string{"run_c"}, map[string]finishedRef{"run_c": {offset: 0, endedAt: 5}})},
	} {
		if err := rs.add(r); err != nil {
			t.Fatal(err)
		}
	}
	if len(rs.live) != 0 {
		t.Errorf("live runs %v, want none", rs.live)
	}
	if f := rs.finished["run_a"]; f.offset != 4 || f.endedAt != 99 {
		t.Errorf("run_a in the finished index at %+v, want offset 4, ended 99", f)
	}
	if _, ok := rs.finished["run_b"]; ok {
		t.Error("a tombstoned run is still in the finished index")
	}
	if _, ok := rs.finished["run_c"]; !ok || rs.meta.NextCommand != 5 || rs.read != 6 {
		t.Errorf("index entry or meta not applied: %+v, meta %+v, read %d", rs.finished, rs.meta, rs.read)
	}
	cp, err := decodeCheckpoint(rec(4, "run_a", done).Value)
	if err != nil || cp.State.Input.Content != "" {
		t.Errorf("a finished run's checkpoint keeps its input %q (%v); a summary leaves it out", cp.State.Input.Content, err)
	}
}

func TestHistorySpansMergeCloseRangesOfAPartition(t *testing.T) {
	refs := []commands.HistoryRef{
		{RunID: "run_c", Partition: 1, From: 5000, To: 5100},
		{RunID: "run_a", Partition: 1, From: 100, To: 200},
		{RunID: "run_b", Partition: 1, From: 300, To: 400}, // close to run_a: one read
		{RunID: "run_d", Partition: 2, From: 300, To: 400}, // another partition
	}
	got := historySpans(refs)
	want := []span{{partition: 1, from: 100, to: 400, refs: []int{1, 2}}, {partition: 1, from: 5000, to: 5100, refs: []int{0}},
		{partition: 2, from: 300, to: 400, refs: []int{3}}}
	if len(got) != len(want) {
		t.Fatalf("spans %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].partition != want[i].partition || got[i].from != want[i].from || got[i].to != want[i].to || !slices.Equal(got[i].refs, want[i].refs) {
			t.Errorf("span %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A meta record replaces the one before it whole: what it leaves out (no
// run lags any more) is not carried over from the earlier record.
func TestALaterMetaRecordReplacesTheEarlier(t *testing.T) {
	from := int64(12)
	rs := newRestored()
	for i, m := range []partitionMeta{{NextCommand: 1, LagFrom: &from}, {NextCommand: 2}} {
		raw, err := jsonMeta(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.add(kafka.Record{Offset: int64(i), Key: metaKey, Value: raw}); err != nil {
			t.Fatal(err)
		}
	}
	if rs.meta.NextCommand != 2 || rs.meta.LagFrom != nil {
		t.Errorf("the restored meta is %+v, want the last record's", rs.meta)
	}
}
