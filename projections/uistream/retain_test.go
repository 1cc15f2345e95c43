package uistream_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// records are evs as a tail delivers them: keyed by run, undecoded.
func records(evs []events.Envelope) []*uistream.Record {
	out := make([]*uistream.Record, len(evs))
	for i, e := range evs {
		out[i] = &uistream.Record{Key: e.RunID, Offset: int64(i), Value: eventstest.Raw(e)}
	}
	return out
}

// TestAStreamStartsFromTheHubBeforeTheReadModelHasTheRun: the read model has
// nothing of the run yet; the hub delivered all of it before the stream
// subscribed. The stream is the whole reply, from the hub alone.
func TestAStreamStartsFromTheHubBeforeTheReadModelHasTheRun(t *testing.T) {
	t.Parallel()
	evs := goldenCases["approval_allowed"](t)
	src := newMemSource()
	src.put(evs, 0)
	hub := newHub(t, 64)
	hub.Deliver(records(evs))
	sink, done := serveRun(t.Context(), newStreamer(t, hub, uistream.StreamConfig{}), src, runA, uistream.Position{})
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	if got, want := sink.frames(), fullStream(t, evs); got != want {
		t.Fatalf("stream from the hub:\n%s\nwant:\n%s", got, want)
	}
}

// TestAYoungRunsStreamReadsNoReadModel: the hub retains the run from its
// first event, so the stream is served from the hub alone although the read
// model has the run too; a stream the hub retains only the end of reads the
// rest from the read model and is just as whole.
func TestAYoungRunsStreamReadsNoReadModel(t *testing.T) {
	t.Parallel()
	evs := goldenCases["approval_allowed"](t)
	want := fullStream(t, evs)
	for _, tc := range []struct {
		name      string
		retain    int
		wantReads bool
	}{
		{"retained from its first event", 1 << 20, false},
		{"retained only its latest events", 2 << 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := newMemSource()
			src.put(evs, len(evs))
			hub, err := uistream.NewHub(uistream.HubConfig{Retain: tc.retain, Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			defer hub.Close()
			hub.Deliver(records(evs))
			if !hub.Knows("acme", runA) || hub.Knows("globex", runA) {
				t.Errorf("Knows: acme %v, globex %v; want true, false", hub.Knows("acme", runA), hub.Knows("globex", runA))
			}
			sink, done := serveRun(t.Context(), newStreamer(t, hub, uistream.StreamConfig{}), src, runA, uistream.Position{})
			if err := wait(t, done); err != nil {
				t.Fatal(err)
			}
			if got := sink.frames(); got != want {
				t.Fatalf("stream:\n%s\nwant:\n%s", got, want)
			}
			if reads := src.readCount(); (reads > 0) != tc.wantReads {
				t.Errorf("the stream read the read model %d times; want reads: %v", reads, tc.wantReads)
			}
		})
	}
}

func TestTheHubRetainsTheLatestRecordsWithinItsBudget(t *testing.T) {
	t.Parallel()
	evs := goldenCases["approval_allowed"](t)
	hub, err := uistream.NewHub(uistream.HubConfig{Retain: 2 << 10, Logger: zap.NewNop()}) // a few events' worth
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	hub.Deliver(records(evs))
	last := evs[len(evs)-1]
	if got := hub.LastSeq(runA); got != last.Seq {
		t.Errorf("LastSeq %d, want %d", got, last.Seq)
	}
	got := hub.Recent("acme", runA, 0)
	if len(got) == 0 || got[0].Seq == 1 || got[len(got)-1].Seq != last.Seq || got[len(got)-1].Seq-got[0].Seq != int64(len(got)-1) {
		t.Errorf("a hub with a 2 KiB budget retains seqs %v, want the latest few in a row", seqs(got))
	}
	if got := hub.Recent("globex", runA, 0); len(got) != 0 {
		t.Errorf("another tenant sees %d retained events of the run", len(got))
	}
}

func seqs(evs []*events.Envelope) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

func TestAwaitRunSeesOnlyTheTenantsExistingRun(t *testing.T) {
	t.Parallel()
	evs := goldenCases["text_only"](t) // run runA of acme
	hub := newHub(t, 8)
	hub.Deliver(records(evs[:1]))
	if !hub.AwaitRun(t.Context(), "acme", runA) {
		t.Error("a retained run is not seen")
	}
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	if hub.AwaitRun(short(), "globex", runA) {
		t.Error("another tenant sees the run")
	}
	rejected := events.Envelope{RunID: run1, Seq: 1, Type: events.CommandRejected, TenantID: "acme", SchemaVersion: "v1", CommandID: "cmd_1"}
	hub.Deliver(records([]events.Envelope{rejected}))
	if hub.AwaitRun(short(), "acme", run1) {
		t.Error("a run that only has a rejection is seen")
	}
	// Whether the waiter registers before the delivery (woken) or after
	// (the hub retains the record), it sees the run.
	seen := make(chan bool, 1)
	go func() { seen <- hub.AwaitRun(t.Context(), "acme", run1) }()
	hub.Deliver(records([]events.Envelope{{RunID: run1, Seq: 2, Type: events.RunAccepted, TenantID: "acme", SchemaVersion: "v1"}}))
	if !<-seen {
		t.Fatal("AwaitRun answered false for a run delivered while it waited")
	}
}

// TestTheHubDecodesOnlyWhatAStreamNeeds: an undecodable record of a run
// nobody streams is never decoded, so never reported; the same record of a
// streamed run is.
func TestTheHubDecodesOnlyWhatAStreamNeeds(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.WarnLevel)
	hub, err := uistream.NewHub(uistream.HubConfig{Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	hub.Deliver([]*uistream.Record{{Key: run1, Value: []byte("not json")}})
	if n := logs.Len(); n != 0 {
		t.Fatalf("a record of a run nobody streams was decoded: %d warnings", n)
	}
	sub := hub.SubscribeRun("acme", run1)
	defer sub.Close()
	hub.Deliver([]*uistream.Record{{Key: run1, Value: []byte("not json")}})
	if n := logs.Len(); n != 1 {
		t.Fatalf("a record of a streamed run: %d warnings, want 1", n)
	}
}
