package executor

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestAdoptSchedulesRecordsOfOlderExecutors: checkpoints written before the
// yield (no requeued, no queuePosition; a paused run held its key) and after
// it adopt alike. The paused run holds no key; the queued runs wait in their
// order, the resumed one where it joined again; a paused run with an
// accepted answer holds its key.
func TestAdoptSchedulesRecordsOfOlderExecutors(t *testing.T) {
	const key = `{"tenantId":"acme","workspaceId":"w","agentId":"a","ownerId":"u"}`
	const other = `{"tenantId":"acme","workspaceId":"w","agentId":"a","ownerId":"v"}`
	old := func(id, status, sk string, order int64) string {
		return `{"state":{"runId":"` + id + `","tenantId":"acme","input":{"content":"hi"},"sandboxKey":` + sk +
			`,"status":"` + status + `","lastSeq":3},"from":0,"bytes":1,"order":` + strconv.FormatInt(order, 10) + `}`
	}
	records := map[string]string{
		"run_paused": old("run_paused", "paused", key, 0),
		"run_q1":     old("run_q1", "queued", key, 1),
		"run_back": `{"state":{"runId":"run_back","tenantId":"acme","input":{"content":"hi"},"sandboxKey":` + key +
			`,"status":"queued","lastSeq":9,"requeued":true,"queuePosition":2},"from":0,"bytes":1,"order":4}`,
		"run_q2": old("run_q2", "queued", key, 2),
		"run_answered": `{"state":{"runId":"run_answered","tenantId":"acme","input":{"content":"hi"},"sandboxKey":` + other +
			`,"status":"paused","lastSeq":5,"pending":[{"commandId":"cmd_1","type":"AppendUserInput","idempotencyKey":"k",` +
			`"command":{"intent":"clarification","content":"blue"}}]},"from":0,"bytes":1,"order":3}`,
	}
	rs := newRestored()
	for id, raw := range records {
		cp, err := decodeCheckpoint([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		rs.live[id] = cp
	}
	w := &partitionWorker{log: zap.NewNop(), ctx: context.Background(), runs: map[string]*Run{},
		keys: map[string]*keyQueue{}, timers: map[string]*time.Timer{}}
	w.adopt(rs)
	q := w.keys[sandboxKey(rs.live["run_paused"].State)]
	if q == nil || q.holder != "" || !slices.Equal(q.queued, []string{"run_q1", "run_q2", "run_back"}) {
		t.Fatalf("key queue %+v, want no holder and run_q1, run_q2, run_back waiting", q)
	}
	if a := w.keys[sandboxKey(rs.live["run_answered"].State)]; a == nil || a.holder != "run_answered" {
		t.Errorf("the answered paused run's key %+v, want it held by run_answered", a)
	}
	if st := w.runs["run_back"].committed(); !st.Requeued || st.QueuePosition != 2 {
		t.Errorf("the resumed run's state %+v lost requeued or its place", st)
	}
}
