package uistream_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

const (
	run1 = "run_01J00000000000000000000001"
	run2 = "run_01J00000000000000000000002"
	run3 = "run_01J00000000000000000000003"
)

// chat is a completed run of session testSession answering one message.
func chat(t testing.TB, runID, reply string) []events.Envelope {
	b := started(t, runID, "cmd_"+runID[4:], "hi")
	b.response("itm_"+runID[4:], 0, strings.SplitAfter(reply, " "))
	return b.Completed(reply).Events()
}

// inSession is a run's stream as a session stream shows it: ids prefixed
// with the run, no [DONE].
func inSession(t testing.TB, runID string, evs []events.Envelope) string {
	s := strings.ReplaceAll("\n"+fullStream(t, evs), "\nid: ", "\nid: "+runID+":")[1:]
	return strings.TrimSuffix(s, "data: [DONE]\n\n")
}

func serveSession(ctx context.Context, s *uistream.Streamer, src uistream.SessionSource, from *uistream.SessionPosition) (*memSink, <-chan error) {
	sink := &memSink{}
	done := make(chan error, 1)
	go func() { done <- s.Session(ctx, sink, src, "acme", testSession, from) }()
	return sink, done
}

// TestSessionJoinsMidReplyAndFollowsNextRuns: a client without a position
// gets the reply in progress from its start (not the ended one before it),
// then the session's next run as it appears.
func TestSessionJoinsMidReplyAndFollowsNextRuns(t *testing.T) {
	t.Parallel()
	ev1, ev2, ev3 := chat(t, run1, "first answer"), chat(t, run2, "second answer here"), chat(t, run3, "third")
	src := newMemSource()
	src.put(ev1, len(ev1))
	src.put(ev2, 4) // mid-reply: a delta is out
	hub := newHub(t, 64)
	s := newStreamer(t, hub, uistream.StreamConfig{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sink, done := serveSession(ctx, s, src, nil)
	sink.waitFor(t, `"type":"text-delta"`)
	hub.Publish(ev2[4:]...)
	sink.waitFor(t, `"type":"finish"`)

	src.put(ev3, 0) // the projector has not written the new run yet
	go src.showAfterRereads(ctx, run3, len(ev3))
	hub.Publish(ev3...)
	want := inSession(t, run2, ev2) + inSession(t, run3, ev3)
	eventually.Holds(t, untilTimeout, "the third run", func() bool { return sink.frames() == want })
	cancel()
	if err := wait(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("session stream ended with %v", err)
	}
	if got := sink.frames(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestSessionResumesFromACursor: a cursor inside the first run gives the rest
// of it, then the next runs in order.
func TestSessionResumesFromACursor(t *testing.T) {
	t.Parallel()
	ev1, ev2 := chat(t, run1, "first answer"), chat(t, run2, "second")
	src := newMemSource()
	src.put(ev1, len(ev1))
	src.put(ev2, len(ev2))
	s := newStreamer(t, newHub(t, 8), uistream.StreamConfig{})
	s1 := inSession(t, run1, ev1)
	for _, id := range sseIDs(s1) {
		from, err := uistream.ParseSessionPosition(id)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		sink, done := serveSession(ctx, s, src, &from)
		want := after(t, s1, id) + inSession(t, run2, ev2)
		eventually.Holds(t, untilTimeout, "both runs", func() bool { return sink.frames() == want })
		cancel()
		if err := wait(t, done); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
}

// TestSessionWithEveryReplyEndedWaitsForTheNext: nothing old is replayed.
func TestSessionWithEveryReplyEndedWaitsForTheNext(t *testing.T) {
	t.Parallel()
	ev1, ev2 := chat(t, run1, "first"), chat(t, run2, "second")
	src := newMemSource()
	src.put(ev1, len(ev1))
	hub := newHub(t, 64)
	// A short keep-alive: the stream finds the new run at a tick even if
	// it subscribed after the run's events were published.
	s := newStreamer(t, hub, uistream.StreamConfig{KeepAlive: 5 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sink, done := serveSession(ctx, s, src, nil)
	sink.waitFor(t, ": keep-alive") // run1 ended before the client came: it waits for the next run
	src.put(ev2, len(ev2))
	hub.Publish(ev2...)
	want := inSession(t, run2, ev2)
	eventually.Holds(t, untilTimeout, "the new run", func() bool { return sink.frames() == want })
	cancel()
	<-done
}

func TestSessionCursorOfAnotherSession(t *testing.T) {
	t.Parallel()
	src := newMemSource()
	src.put(chat(t, run1, "x"), 5)
	s := newStreamer(t, newHub(t, 8), uistream.StreamConfig{})
	err := s.Session(t.Context(), &memSink{}, src, "acme", testSession, &uistream.SessionPosition{RunID: run3, Pos: uistream.After(2)})
	if !errors.Is(err, uistream.ErrNotInSession) {
		t.Fatalf("got %v, want ErrNotInSession", err)
	}
}

func TestParsePositions(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]uistream.Position{"0": uistream.After(0), "12": uistream.After(12), "12.3": {Seq: 12, Part: 3}} {
		got, err := uistream.ParsePosition(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("%q: got %+v %v (%s)", in, got, err, got.String())
		}
	}
	for _, bad := range []string{"", "-1", "+3", "1.", "1.x", "0.1", "x", "1.-2", "1.+2", "run_1:5"} {
		if _, err := uistream.ParsePosition(bad); !errors.Is(err, uistream.ErrBadCursor) {
			t.Errorf("%q: got %v, want ErrBadCursor", bad, err)
		}
	}
	sp, err := uistream.ParseSessionPosition(run1 + ":7.1")
	if err != nil || sp.RunID != run1 || sp.Pos != (uistream.Position{Seq: 7, Part: 1}) || sp.String() != run1+":7.1" {
		t.Errorf("session position: %+v %v", sp, err)
	}
	for _, bad := range []string{"7", ":7", run1 + ":", run1 + ":x"} {
		if _, err := uistream.ParseSessionPosition(bad); !errors.Is(err, uistream.ErrBadCursor) {
			t.Errorf("%q: got %v, want ErrBadCursor", bad, err)
		}
	}
}
