package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/xbot-runtime/xbot/services/api"
)

// TestRenamedQueryParametersKeepTheirOldNames: after_seq, the former name of
// afterSeq, gives the same answer alone or beside afterSeq with the same
// value; beside it with another value it is a 422 problem at its location,
// on every operation that takes afterSeq. The document lists it as
// deprecated.
func TestRenamedQueryParametersKeepTheirOldNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "running")
	for seq := int64(1); seq <= 4; seq++ {
		env := fmt.Sprintf(`{"eventId":"evt_%d","runId":%q,"seq":%d,"schemaVersion":"v1","type":"runtime.item.delta","payload":{"delta":"x"}}`, seq, run.RunID, seq)
		e.store.addEvent(api.EventRecord{RunID: run.RunID, Seq: seq, TenantID: tenantA, Type: "runtime.item.delta", Envelope: []byte(env)})
	}
	events := "/v1/runs/" + run.RunID + "/events?limit=2&"
	want := string(e.do(t, "GET", events+"afterSeq=1", tokenA, nil).want(t, http.StatusOK).raw)
	for _, q := range []string{"after_seq=1", "after_seq=1&afterSeq=1"} {
		if got := string(e.do(t, "GET", events+q, tokenA, nil).want(t, http.StatusOK).raw); got != want {
			t.Errorf("?%s: %s, want what ?afterSeq=1 gives: %s", q, got, want)
		}
	}
	if got := decode[struct{ NextAfterSeq int64 }](t, e.do(t, "GET", events+"after_seq=2", tokenA, nil)); got.NextAfterSeq != 4 {
		t.Errorf("?after_seq=2: next %d, want 4", got.NextAfterSeq)
	}
	for _, path := range []string{events, "/v1/runs/" + run.RunID + "/stream?"} {
		r := e.do(t, "GET", path+"after_seq=1&afterSeq=2", tokenA, nil).wantCode(t, http.StatusUnprocessableEntity, "validation_failed")
		r.wantLocation(t, "query.after_seq")
	}
	doc := servedDocuments(t)["/openapi.json"]
	for _, op := range operationsOf(doc) {
		var now, former bool
		for _, p := range op.params() {
			dep, _ := p["deprecated"].(bool)
			now = now || (p["name"] == "afterSeq" && !dep)
			former = former || (p["name"] == "after_seq" && dep)
		}
		if now != former {
			t.Errorf("%s %s: afterSeq %v, deprecated after_seq %v", op.method, op.path, now, former)
		}
	}
}
