package loadtool

import (
	"context"
	"maps"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// watch follows the events topic from its end (a kafka.Tail, read
// committed) and keeps what the history tool needs of it: how many events
// were committed, when each run ended and how, which runs it still waits
// for, and when the commands it was told to expect got their outcome. Times
// are when the tail received the record: the moment a reader of the log
// could know.
type watch struct {
	tail *kafka.Tail

	mu       sync.Mutex
	events   int64
	ended    map[string]ended   // every run that ended since the watch started
	pending  map[string]int64   // runs submitted and not ended yet: their last seq
	endedSeq int64              // the events of the runs that ended (their last seqs)
	outcomes map[string]outcome // expected commands, outcome time once seen
	lastEnd  map[int32]string   // the latest run that ended, per partition
	failed   int64              // runs that ended other than completed
	changed  chan struct{}      // closed and replaced on every delivery
}

// ended is how and when a run ended.
type ended struct {
	at     time.Time
	status events.Type
}

// outcome is a command's outcome, once seen.
type outcome struct {
	at   time.Time
	typ  events.Type
	seen bool
}

func newWatch(cfg kafka.Config, log *zap.Logger) (*watch, error) {
	w := &watch{ended: map[string]ended{}, pending: map[string]int64{}, outcomes: map[string]outcome{},
		lastEnd: map[int32]string{}, changed: make(chan struct{})}
	tail, err := kafka.NewTail(kafka.TailConfig{Kafka: cfg, Topic: cfg.WithDefaults().EventsTopic(), Deliver: w.deliver,
		Logger: log})
	if err != nil {
		return nil, err
	}
	w.tail = tail
	return w, nil
}

// run reads until ctx is done; the watch counts from Ready on.
func (w *watch) run(ctx context.Context) error { return w.tail.Run(ctx) }

func (w *watch) deliver(recs []kafka.Record) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range recs {
		w.events++
		env, err := events.Decode(r.Value)
		if err != nil {
			continue // not ours to judge: the log invariant is checked elsewhere
		}
		w.note(r.Partition, env, now)
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *watch) note(p int32, env events.Envelope, now time.Time) {
	if _, ok := w.pending[env.RunID]; ok {
		w.pending[env.RunID] = env.Seq
	}
	switch {
	case terminalEvent(env.Type):
		w.ended[env.RunID] = ended{at: now, status: env.Type}
		w.endedSeq += env.Seq
		w.lastEnd[p] = env.RunID
		delete(w.pending, env.RunID)
		if env.Type != events.RunCompleted {
			w.failed++
		}
	case strings.HasPrefix(string(env.Type), "runtime.command."):
		if o, ok := w.outcomes[env.CommandID]; ok && !o.seen {
			w.outcomes[env.CommandID] = outcome{at: now, typ: env.Type, seen: true}
		}
	}
}

func terminalEvent(t events.Type) bool {
	switch t {
	case events.RunCompleted, events.RunFailed, events.RunCancelled, events.RunExpired:
		return true
	default:
		return false
	}
}

// track marks runs as submitted: until they end they count as pending.
// Call it before the run's create is produced.
func (w *watch) track(ids ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		if _, done := w.ended[id]; !done {
			w.pending[id] = 0
		}
	}
}

// expect registers commands whose outcome is to be timed. Call it before
// the command is produced.
func (w *watch) expect(commandIDs ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range commandIDs {
		w.outcomes[id] = outcome{}
	}
}

// counts returns the events seen, the runs pending and the runs ended.
func (w *watch) counts() (evs int64, pending, endedRuns int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.events, len(w.pending), len(w.ended)
}

// expected returns the events the log will hold once every pending run
// has ended, each with as many events as the ended runs had on average
// (perRun; defaultEventsPerRun before any ended), and perRun.
func (w *watch) expected() (total, perRun float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	perRun = defaultEventsPerRun
	if len(w.ended) > 0 {
		perRun = float64(w.endedSeq) / float64(len(w.ended))
	}
	total = float64(w.events)
	for _, seq := range w.pending {
		total += max(0, perRun-float64(seq))
	}
	return total, perRun
}

// until waits until cond, called under the watch's lock after each
// delivery, holds, or ctx ends.
func (w *watch) until(ctx context.Context, cond func() bool) error {
	for {
		w.mu.Lock()
		ok, next := cond(), w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-next:
		}
	}
}

// endedAt waits until run id has ended and returns when and how.
func (w *watch) endedAt(ctx context.Context, id string) (ended, error) {
	var e ended
	err := w.until(ctx, func() bool {
		var ok bool
		e, ok = w.ended[id]
		return ok
	})
	return e, err
}

// outcomesAt waits until every command of ids has its outcome and returns
// the outcomes in the order of ids.
func (w *watch) outcomesAt(ctx context.Context, ids []string) ([]outcome, error) {
	out := make([]outcome, len(ids))
	err := w.until(ctx, func() bool {
		for i, id := range ids {
			if out[i] = w.outcomes[id]; !out[i].seen {
				return false
			}
		}
		return true
	})
	return out, err
}

// lastEnded returns, per partition, the latest run that ended there.
func (w *watch) lastEnded() map[int32]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.lastEnd)
}
