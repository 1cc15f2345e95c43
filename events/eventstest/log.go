package eventstest

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// Epoch is the occurredAt (Unix ms) of a Log's first event unless Clock
// says otherwise: 2023-11-14 22:13:20 UTC, a fixed instant so logs are the
// same on every run.
const Epoch int64 = 1_700_000_000_000

// defaultStepMs is how far the clock advances per event: one second, so
// times read easily in goldens.
const defaultStepMs = 1000

// Log is one run's log under construction. Its methods append events and
// return the Log, so calls chain; the first event a helper cannot seal or
// fold fails the test (tb.Fatal). A Log is not safe for concurrent use.
type Log struct {
	tb      testing.TB
	id      events.Identity
	state   events.RunState
	evs     []events.Envelope
	now     int64 // occurredAt of the next event, Unix ms
	step    int64
	emitLag int64
}

// Option configures a Log.
type Option func(*Log)

// Clock sets the occurredAt of the first event to firstMs (Unix ms) and
// advances it by stepMs after every event.
func Clock(firstMs, stepMs int64) Option {
	return func(l *Log) { l.now, l.step = firstMs, stepMs }
}

// EmittedAfter stamps every event's emittedAt lagMs after its occurredAt
// (by default they are equal, as Draft.Seal makes them).
func EmittedAfter(lagMs int64) Option {
	return func(l *Log) { l.emitLag = lagMs }
}

// New starts an empty log of the run id names. Events are appended with
// Add or the typed helpers.
func New(tb testing.TB, id events.Identity, opts ...Option) *Log {
	l := &Log{tb: tb, id: id, now: Epoch, step: defaultStepMs}
	for _, o := range opts {
		o(l)
	}
	return l
}

// EventID is the id a Log gives the event of run runID at seq.
func EventID(runID string, seq int64) string {
	return events.DerivedID("evt", runID, strconv.FormatInt(seq, 10))
}

// Add seals each draft as the run's next event and folds it; a draft the
// state machine refuses fails the test.
func (l *Log) Add(ds ...events.Draft) *Log {
	l.tb.Helper()
	for _, d := range ds {
		seq := l.state.LastSeq + 1
		env, err := d.Seal(l.id, seq, EventID(l.id.RunID, seq), l.now)
		if err != nil {
			l.tb.Fatalf("run %s seq %d %s: %v", l.id.RunID, seq, d.Type, err)
		}
		env.EmittedAt = l.now + l.emitLag
		next, err := events.Fold(l.state, env)
		if err != nil {
			l.tb.Fatalf("run %s seq %d %s is not a legal next event: %v", l.id.RunID, seq, d.Type, err)
		}
		l.state = next
		l.evs = append(l.evs, env)
		l.now += l.step
	}
	return l
}

// At sets the occurredAt (Unix ms) of the next event; the clock goes on
// from there.
func (l *Log) At(ms int64) *Log {
	l.now = ms
	return l
}

// Now is the occurredAt (Unix ms) the next event will get.
func (l *Log) Now() int64 { return l.now }

// Events returns a copy of the log so far, in seq order.
func (l *Log) Events() []events.Envelope { return slices.Clone(l.evs) }

// Last returns the last event appended; it fails the test on an empty log.
func (l *Log) Last() events.Envelope {
	l.tb.Helper()
	if len(l.evs) == 0 {
		l.tb.Fatalf("run %s has no events yet", l.id.RunID)
	}
	return l.evs[len(l.evs)-1]
}

// First returns the first event of type t about item (empty for the run's
// own events); it fails the test if there is none.
func (l *Log) First(t events.Type, item string) events.Envelope {
	l.tb.Helper()
	for _, e := range l.evs {
		if e.Type == t && e.ItemID == item {
			return e
		}
	}
	l.tb.Fatalf("run %s has no %s of item %q", l.id.RunID, t, item)
	return events.Envelope{}
}

// State is the run's state after the last event, as events.Fold left it.
func (l *Log) State() events.RunState { return l.state }

// Identity names the run the log belongs to.
func (l *Log) Identity() events.Identity { return l.id }

// RunID is the run's id.
func (l *Log) RunID() string { return l.id.RunID }

// Raw is v as JSON, for the Data and raw fields of payloads. It panics if v
// cannot be encoded: test values always can.
func Raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("eventstest: encode " + err.Error())
	}
	return b
}

// raw is Raw, with nil for a nil v so that optional Data stays absent.
func raw(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	return Raw(v)
}

// Interleave merges the logs of several runs round-robin, keeping each
// run's order, as runs sharing a partition interleave on the topic.
func Interleave(logs ...[]events.Envelope) []events.Envelope {
	var out []events.Envelope
	for i := 0; ; i++ {
		added := false
		for _, l := range logs {
			if i < len(l) {
				out = append(out, l[i])
				added = true
			}
		}
		if !added {
			return out
		}
	}
}
