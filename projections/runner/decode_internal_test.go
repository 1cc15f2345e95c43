package runner

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

func TestDecodeKeepsPartitionOrderAndMarksUndecodable(t *testing.T) {
	t.Parallel()
	env, err := events.Draft{Type: events.RunStarted}.Seal(events.Identity{RunID: "run_a", TenantID: "acme"}, 2, "evt_1", 1)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(env)
	rec := func(p int32, off int64, key string, value []byte, hs ...kgo.RecordHeader) *kgo.Record {
		return &kgo.Record{Topic: "events", Partition: p, Offset: off, Key: []byte(key), Value: value, Headers: hs}
	}
	cases := []struct {
		name    string
		parts   map[int32][]*kgo.Record
		want    []string // partition/offset of the batch, in order
		poison  map[int64]string
		headers map[int64]map[string]string
	}{
		{name: "empty", parts: nil},
		{name: "one partition in offset order",
			parts: map[int32][]*kgo.Record{0: {rec(0, 4, "run_a", good), rec(0, 5, "run_a", good)}},
			want:  []string{"0/4", "0/5"}},
		{name: "undecodable records carry their poison with the key as run",
			parts:  map[int32][]*kgo.Record{1: {rec(1, 7, "run_b", []byte("{not json")), rec(1, 8, "run_a", good)}},
			want:   []string{"1/7", "1/8"},
			poison: map[int64]string{7: "run_b"}},
		{name: "headers travel with the record",
			parts:   map[int32][]*kgo.Record{2: {rec(2, 1, "run_a", good, kgo.RecordHeader{Key: "h", Value: []byte("v")})}},
			want:    []string{"2/1"},
			headers: map[int64]map[string]string{1: {"h": "v"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ft := kgo.FetchTopic{Topic: "events"}
			for p, rs := range c.parts {
				ft.Partitions = append(ft.Partitions, kgo.FetchPartition{Partition: p, Records: rs})
			}
			batch := decode(kgo.Fetches{{Topics: []kgo.FetchTopic{ft}}})
			if len(batch) != len(c.want) {
				t.Fatalf("batch of %d records, want %d", len(batch), len(c.want))
			}
			for i, p := range batch {
				assertPending(t, p, c.want[i], c.poison[p.rec.Offset], c.headers[p.rec.Offset])
			}
		})
	}
}

func assertPending(t *testing.T, p pending, pos, poisonRun string, hs map[string]string) {
	t.Helper()
	if got := fmtPos(p); got != pos || p.topic != "events" {
		t.Errorf("record at %s of %q, want %s of events", got, p.topic, pos)
	}
	switch {
	case poisonRun == "" && p.bad != nil:
		t.Errorf("%s poison %v, want decoded", pos, p.bad)
	case poisonRun == "" && p.rec.Event.RunID != "run_a":
		t.Errorf("%s decoded run %q, want run_a", pos, p.rec.Event.RunID)
	case poisonRun != "" && (p.bad == nil || p.bad.RunID != poisonRun):
		t.Errorf("%s poison %v, want poison of %s", pos, p.bad, poisonRun)
	}
	for k, v := range hs {
		if p.rec.Headers[k] != v {
			t.Errorf("%s headers %v, want %s=%s", pos, p.rec.Headers, k, v)
		}
	}
}

func fmtPos(p pending) string { return fmt.Sprintf("%d/%d", p.rec.Partition, p.rec.Offset) }

func TestSplitKeepsOrderWithinTheByteBound(t *testing.T) {
	t.Parallel()
	rec := func(n int) pending { return pending{rec: Record{Record: kafka.Record{Value: make([]byte, n)}}} }
	cases := []struct {
		name  string
		sizes []int
		bound int
		want  [][]int
	}{
		{name: "empty", bound: 10},
		{name: "all fit", sizes: []int{3, 3, 4}, bound: 10, want: [][]int{{3, 3, 4}}},
		{name: "cut where the next would pass", sizes: []int{4, 4, 4, 4}, bound: 10, want: [][]int{{4, 4}, {4, 4}}},
		{name: "a larger record is a batch of its own", sizes: []int{2, 30, 2}, bound: 10,
			want: [][]int{{2}, {30}, {2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var batch []pending
			for _, n := range c.sizes {
				batch = append(batch, rec(n))
			}
			var got [][]int
			for _, b := range split(batch, c.bound) {
				var sizes []int
				for _, p := range b {
					sizes = append(sizes, len(p.rec.Value))
				}
				got = append(got, sizes)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("split(%v, %d) = %v, want %v", c.sizes, c.bound, got, c.want)
			}
		})
	}
}
