package uistream_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// fullStream is the whole run stream of evs.
func fullStream(t testing.TB, evs []events.Envelope) string {
	t.Helper()
	var b bytes.Buffer
	if err := uistream.WriteRun(&b, evs, uistream.Position{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// after returns the frames of stream that follow the frame with id.
func after(t testing.TB, stream, id string) string {
	t.Helper()
	frames := strings.SplitAfter(stream, "\n\n")
	for i, f := range frames {
		if strings.HasPrefix(f, "id: "+id+"\n") {
			return strings.Join(frames[i+1:], "")
		}
	}
	t.Fatalf("no frame with id %s", id)
	return ""
}

// serveRun runs a run stream in the background; the returned channel gets
// its error when it ends.
func serveRun(ctx context.Context, s *uistream.Streamer, src uistream.Source, runID string, from uistream.Position) (*memSink, <-chan error) {
	sink := &memSink{}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, sink, src, "acme", runID, from) }()
	return sink, done
}

func wait(t *testing.T, done <-chan error) error {
	t.Helper()
	var err error
	eventually.Holds(t, untilTimeout, "the stream to end", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	return err
}

// TestResumeAtEveryID resumes every golden run at every id it has: the
// stream must continue with exactly the chunks after that id.
func TestResumeAtEveryID(t *testing.T) {
	t.Parallel()
	for _, name := range slices.Sorted(maps.Keys(goldenCases)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			evs := goldenCases[name](t)
			full := fullStream(t, evs)
			src := newMemSource()
			src.put(evs, len(evs))
			s := newStreamer(t, newHub(t, 16), uistream.StreamConfig{})
			for _, id := range append([]string{"0"}, sseIDs(full)...) {
				pos, err := uistream.ParsePosition(id)
				if err != nil {
					t.Fatal(err)
				}
				sink := &memSink{}
				if err := s.Run(context.Background(), sink, src, "acme", runA, pos); err != nil {
					t.Fatalf("resume at %s: %v", id, err)
				}
				want := full
				if id != "0" {
					want = after(t, full, id)
				}
				if got := sink.frames(); got != want {
					t.Fatalf("resume at %s:\n got: %q\nwant: %q", id, got, want)
				}
			}
		})
	}
}

// TestLiveEqualsReplay joins a run mid-reply while the projector lags and the
// hub delivers overlapping, early and missing events: the client must get
// the same bytes as a replay of the whole log, start first.
func TestLiveEqualsReplay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// visible: events the read model has when the client joins;
		// early: events the hub published before the client subscribed;
		// live: the first event published after it did; lag: the read
		// model gets the rest only after the stream asked it again.
		visible, early, live int
		lag                  bool
	}{
		{"overlap at the seam", 6, 0, 1, false},
		{"live event ahead of the read model", 6, 0, 10, true},
		{"hub ahead before subscribing", 6, 9, 10, true},
		{"read model ahead of the hub", 12, 0, 4, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			evs := goldenCases["approval_allowed"](t)
			full := fullStream(t, evs)
			src := newMemSource()
			src.put(evs, tc.visible)
			hub := newHub(t, 64)
			hub.Publish(evs[:tc.early]...)
			s := newStreamer(t, hub, uistream.StreamConfig{})
			if tc.lag {
				go src.showAfterRereads(t.Context(), runA, len(evs))
			}
			sink, done := serveRun(t.Context(), s, src, runA, uistream.Position{})
			if tc.early == 0 {
				sink.waitFor(t, `"type":"start"`) // subscribed and backfilled
			}
			hub.Publish(evs[tc.live-1:]...)
			if err := wait(t, done); err != nil {
				t.Fatal(err)
			}
			if got := sink.frames(); got != full {
				t.Fatalf("live stream differs from the replay:\n got: %q\nwant: %q", got, full)
			}
		})
	}
}

// TestIdleStreamFindsMissedEvents: an event the hub never delivered (it was
// published before the hub started) reaches the client at the next
// keep-alive from the read model.
func TestIdleStreamFindsMissedEvents(t *testing.T) {
	t.Parallel()
	evs := goldenCases["text_only"](t)
	src := newMemSource()
	src.put(evs, 3)
	s := newStreamer(t, newHub(t, 8), uistream.StreamConfig{KeepAlive: 5 * time.Millisecond})
	sink, done := serveRun(t.Context(), s, src, runA, uistream.Position{})
	sink.waitFor(t, ": keep-alive")
	src.show(runA, len(evs))
	if err := wait(t, done); err != nil {
		t.Fatal(err)
	}
	if got := sink.frames(); got != fullStream(t, evs) {
		t.Fatalf("got %q", got)
	}
}

// TestSlowClientIsCutOffAndResumes: a client that stops reading is cut off
// without slowing another; it resumes from its last id with exactly the rest.
func TestSlowClientIsCutOffAndResumes(t *testing.T) {
	t.Parallel()
	evs := goldenCases["tools"](t)
	full := fullStream(t, evs)
	src := newMemSource()
	src.put(evs, 2)
	hub := newHub(t, 3)
	s := newStreamer(t, hub, uistream.StreamConfig{})
	slow := newGatedSink()
	slowDone := make(chan error, 1)
	go func() { slowDone <- s.Run(t.Context(), slow, src, "acme", runA, uistream.Position{}) }()
	slow.waitFor(t, `"type":"start"`)
	fast, fastDone := serveRun(t.Context(), s, src, runA, uistream.Position{})
	fast.waitFor(t, `"type":"start"`)
	slow.close() // the next write blocks
	for _, e := range evs[2:] {
		hub.Publish(e)
		fast.waitFor(t, idOf(full, e.Seq)) // the fast client keeps up
	}
	slow.open()
	if err := wait(t, slowDone); !errors.Is(err, uistream.ErrCutOff) {
		t.Fatalf("slow client: %v, want ErrCutOff", err)
	}
	if err := wait(t, fastDone); err != nil {
		t.Fatal(err)
	}
	if fast.frames() != full {
		t.Fatalf("the fast client lost chunks:\n%s", fast.frames())
	}
	got := slow.frames()
	if !strings.HasPrefix(full, got) || got == full {
		t.Fatalf("the slow client's stream is not a strict prefix of the run's:\n%s", got)
	}
	ids := sseIDs(got)
	pos, err := uistream.ParsePosition(ids[len(ids)-1])
	if err != nil {
		t.Fatal(err)
	}
	src.show(runA, len(evs))
	rest := &memSink{}
	if err := s.Run(t.Context(), rest, src, "acme", runA, pos); err != nil {
		t.Fatal(err)
	}
	if got+rest.frames() != full {
		t.Fatalf("cut-off stream + resumed stream differ from the run's stream:\n%s\n---\n%s", got, rest.frames())
	}
}

// idOf returns the id line of the last chunk of event seq in stream, or the
// previous event's when seq has no chunks.
func idOf(stream string, seq int64) string {
	for ; seq > 0; seq-- {
		want := "id: " + uistream.After(seq).String() + "\n"
		if strings.Contains(stream, want) {
			return want
		}
	}
	return "id: "
}
