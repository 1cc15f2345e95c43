package uistream_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// drain reads every event sub has buffered.
func drain(sub *uistream.Subscription) []events.Envelope {
	var out []events.Envelope
	for {
		select {
		case e := <-sub.Events():
			out = append(out, *e)
		default:
			return out
		}
	}
}

func TestHubRoutesByRunSessionAndTenant(t *testing.T) {
	t.Parallel()
	h := newHub(t, 64)
	evs := goldenCases["text_only"](t) // run runA, tenant acme, session testSession
	byRun := h.SubscribeRun("acme", runA)
	other := h.SubscribeRun("acme", run1)
	bySession := h.SubscribeSession("acme", testSession)
	otherTenant := h.SubscribeSession("globex", testSession)
	wrongTenantRun := h.SubscribeRun("globex", runA)
	h.Publish(evs...)
	if got := drain(byRun); len(got) != len(evs) {
		t.Errorf("run subscriber got %d events, want %d", len(got), len(evs))
	}
	if got := drain(bySession); len(got) != len(evs) {
		t.Errorf("session subscriber got %d events, want %d", len(got), len(evs))
	}
	for name, sub := range map[string]*uistream.Subscription{"other run": other, "other tenant's session": otherTenant, "other tenant's run": wrongTenantRun} {
		if got := drain(sub); len(got) != 0 {
			t.Errorf("%s subscriber got %d events", name, len(got))
		}
	}
	if got := h.LastSeq(runA); got != evs[len(evs)-1].Seq {
		t.Errorf("LastSeq %d, want %d", got, evs[len(evs)-1].Seq)
	}
	if h.LastSeq(run1) != 0 {
		t.Error("LastSeq of an unseen run is not 0")
	}
}

// TestHubCutsOffOnlyTheSlowSubscriber: 200 subscribers read as events come;
// one never reads. It is cut off at its buffer; every other gets every event
// in order.
func TestHubCutsOffOnlyTheSlowSubscriber(t *testing.T) {
	t.Parallel()
	const subscribers, n, buffer = 200, 500, 16
	h := newHub(t, buffer)
	slow := h.SubscribeRun("acme", runA)
	var wg sync.WaitGroup
	got := make([][]int64, subscribers) // read only after wg.Wait
	counts := make([]atomic.Int64, subscribers)
	for i := range subscribers {
		sub := h.SubscribeRun("acme", runA)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for len(got[i]) < n {
				select {
				case e := <-sub.Events():
					got[i] = append(got[i], e.Seq)
					counts[i].Add(1)
				case <-sub.Done():
					t.Errorf("subscriber %d was cut off after %d events", i, len(got[i]))
					return
				}
			}
		}()
	}
	// Publish the way a paced event log does: the readers keep up, never
	// more than half a buffer behind.
	for seq := int64(1); seq <= n; seq++ {
		h.Publish(events.Envelope{RunID: runA, TenantID: "acme", Seq: seq, Type: events.ItemDelta})
		if seq%(buffer/2) == 0 {
			eventually.Holds(t, untilTimeout, "the readers", func() bool { return minCount(counts) >= seq })
		}
	}
	wg.Wait()
	for i, seqs := range got {
		for j, s := range seqs {
			if s != int64(j+1) {
				t.Fatalf("subscriber %d: event %d has seq %d", i, j, s)
			}
		}
	}
	select {
	case <-slow.Done():
	default:
		t.Fatal("the slow subscriber was not cut off")
	}
	if kept := len(drain(slow)); kept != buffer {
		t.Errorf("the slow subscriber kept %d events, want its buffer of %d", kept, buffer)
	}
}

// minCount is the fewest events any reader has taken.
func minCount(counts []atomic.Int64) int64 {
	m := int64(-1)
	for i := range counts {
		if c := counts[i].Load(); m < 0 || c < m {
			m = c
		}
	}
	return m
}

func TestHubCloseEndsEverySubscription(t *testing.T) {
	t.Parallel()
	h := newHub(t, 4)
	a, b := h.SubscribeRun("acme", runA), h.SubscribeSession("acme", testSession)
	h.Close()
	for _, s := range []*uistream.Subscription{a, b, h.SubscribeRun("acme", run1)} {
		select {
		case <-s.Done():
		default:
			t.Error("a subscription survived Close")
		}
	}
}

func TestHubDeliverSkipsRecordsThatAreNotEvents(t *testing.T) {
	t.Parallel()
	h := newHub(t, 8)
	sub := h.SubscribeRun("acme", runA)
	evs := goldenCases["text_only"](t)
	recs := []*uistream.Record{{Key: runA, Value: []byte("not json")}, {Value: []byte("not json either")}}
	for _, e := range evs[:3] {
		recs = append(recs, &uistream.Record{Key: e.RunID, Value: eventstest.Raw(e)})
	}
	h.Deliver(recs)
	if got := drain(sub); len(got) != 3 {
		t.Fatalf("got %d events, want 3", len(got))
	}
}
