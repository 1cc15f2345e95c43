package uistream

import (
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
)

// HubConfig configures a Hub.
type HubConfig struct {
	// Buffer is how many events a subscriber may fall behind before the hub
	// cuts it off. Default 1024: a model streams ~20 deltas a second, so a
	// client gets close to a minute of slack before it is dropped.
	Buffer int
	// ForgetAfter is how long the hub remembers the last seq of a run that
	// ended. Default 10 minutes, far longer than the read model's lag.
	ForgetAfter time.Duration
	// Logger is required.
	Logger *zap.Logger
}

func (c *HubConfig) setDefaults() {
	if c.Buffer == 0 {
		c.Buffer = 1024
	}
	if c.ForgetAfter == 0 {
		c.ForgetAfter = 10 * time.Minute
	}
}

// Validate reports every problem of the configuration (after defaults).
func (c HubConfig) Validate() error {
	var errs []error
	if c.Buffer < 1 {
		errs = append(errs, errors.New("uistream hub: Buffer must be at least 1"))
	}
	if c.ForgetAfter < 0 {
		errs = append(errs, errors.New("uistream hub: ForgetAfter must not be negative"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("uistream hub: Logger is required"))
	}
	return errors.Join(errs...)
}

// Hub fans the committed events of one API instance's single subscription
// out to its stream clients, by run and by session. Publishing never waits
// for a subscriber: one whose buffer is full is cut off (its Done channel
// closes) and the others are not slowed. It is safe for concurrent use.
type Hub struct {
	cfg       HubConfig
	mu        sync.RWMutex
	closed    bool
	byRun     map[string]map[*Subscription]struct{}
	bySession map[sessionKey]map[*Subscription]struct{}

	marksMu   sync.Mutex
	marks     map[string]runMark
	lastSweep time.Time
}

type sessionKey struct{ tenant, session string }

// runMark is the last seq the hub published for a run.
type runMark struct {
	seq     int64
	endedAt time.Time // zero while the run is active
}

// NewHub returns a hub. Feed it with Publish or Deliver.
func NewHub(cfg HubConfig) (*Hub, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Hub{cfg: cfg, byRun: map[string]map[*Subscription]struct{}{},
		bySession: map[sessionKey]map[*Subscription]struct{}{}, marks: map[string]runMark{}, lastSweep: time.Now()}, nil
}

// Subscription receives the events of one run or one session, in the order
// the hub published them (a run's events in seq order).
type Subscription struct {
	hub    *Hub
	tenant string
	run    string
	sess   sessionKey
	ch     chan *events.Envelope
	done   chan struct{}
	once   sync.Once
}

// Events delivers the subscription's events. They are shared with every
// other subscriber and must not be modified. The channel is never closed.
func (s *Subscription) Events() <-chan *events.Envelope { return s.ch }

// Done is closed when the hub cut the subscription off (it fell Buffer
// events behind, or the hub closed). Events already buffered stay readable.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Close ends the subscription.
func (s *Subscription) Close() { s.hub.remove(s) }

func (s *Subscription) cut() { s.once.Do(func() { close(s.done) }) }

// SubscribeRun subscribes to the events of run runID of tenant.
func (h *Hub) SubscribeRun(tenantID, runID string) *Subscription {
	s := h.newSub(tenantID)
	s.run = runID
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.cut()
		return s
	}
	if h.byRun[runID] == nil {
		h.byRun[runID] = map[*Subscription]struct{}{}
	}
	h.byRun[runID][s] = struct{}{}
	return s
}

// SubscribeSession subscribes to the events of every run of a session.
func (h *Hub) SubscribeSession(tenantID, sessionID string) *Subscription {
	s := h.newSub(tenantID)
	s.sess = sessionKey{tenantID, sessionID}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.cut()
		return s
	}
	if h.bySession[s.sess] == nil {
		h.bySession[s.sess] = map[*Subscription]struct{}{}
	}
	h.bySession[s.sess][s] = struct{}{}
	return s
}

func (h *Hub) newSub(tenantID string) *Subscription {
	return &Subscription{hub: h, tenant: tenantID, ch: make(chan *events.Envelope, h.cfg.Buffer), done: make(chan struct{})}
}

func (h *Hub) remove(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(s)
}

func (h *Hub) removeLocked(s *Subscription) {
	s.cut()
	if s.run != "" {
		delete(h.byRun[s.run], s)
		if len(h.byRun[s.run]) == 0 {
			delete(h.byRun, s.run)
		}
		return
	}
	delete(h.bySession[s.sess], s)
	if len(h.bySession[s.sess]) == 0 {
		delete(h.bySession, s.sess)
	}
}

// Close cuts every subscription off and refuses new ones (they start cut
// off), so open streams end; call it when the API shuts down.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, subs := range h.byRun {
		for s := range subs {
			s.cut()
		}
	}
	for _, subs := range h.bySession {
		for s := range subs {
			s.cut()
		}
	}
	h.byRun, h.bySession = map[string]map[*Subscription]struct{}{}, map[sessionKey]map[*Subscription]struct{}{}
}

// Record is a committed record of the events topic, as a tail of it
// delivers it: where it is, and its value.
type Record struct {
	Partition int32
	Offset    int64
	Value     []byte
}

// Deliver decodes committed records of the events topic and publishes them;
// the wiring calls it with each batch of a kafka.Tail. A record that is not
// an event envelope cannot be streamed and is logged and skipped (the
// projector dead-letters it, so the read model never shows it either).
func (h *Hub) Deliver(recs []Record) {
	evs := make([]events.Envelope, 0, len(recs))
	for _, r := range recs {
		e, err := events.Decode(r.Value)
		if err != nil {
			h.cfg.Logger.Warn("skipping a record that is not an event", zap.Int32("partition", r.Partition),
				zap.Int64("offset", r.Offset), zap.Error(err))
			continue
		}
		evs = append(evs, e)
	}
	h.Publish(evs...)
}

// Publish hands events to their run's and session's subscribers. A run's
// events must be published in seq order, as the events topic holds them.
func (h *Hub) Publish(evs ...events.Envelope) {
	h.mark(evs)
	var slow []*Subscription
	h.mu.RLock()
	for i := range evs {
		e := &evs[i]
		slow = h.fanOut(h.byRun[e.RunID], e, slow)
		if e.PlatformSessionID != "" {
			slow = h.fanOut(h.bySession[sessionKey{e.TenantID, e.PlatformSessionID}], e, slow)
		}
	}
	h.mu.RUnlock()
	if len(slow) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range slow {
		h.removeLocked(s)
	}
}

// fanOut sends e to subs without waiting and returns slow plus the ones that
// had no room.
func (h *Hub) fanOut(subs map[*Subscription]struct{}, e *events.Envelope, slow []*Subscription) []*Subscription {
	for s := range subs {
		if s.tenant != e.TenantID {
			continue
		}
		select {
		case <-s.done:
		case s.ch <- e:
		default:
			s.cut()
			slow = append(slow, s)
		}
	}
	return slow
}

// LastSeq returns the last seq the hub published for runID, or 0 when it
// published none (or forgot the run long after it ended). Events up to it are
// committed, so a reader can wait for the read model to have them.
func (h *Hub) LastSeq(runID string) int64 {
	h.marksMu.Lock()
	defer h.marksMu.Unlock()
	return h.marks[runID].seq
}

func (h *Hub) mark(evs []events.Envelope) {
	now := time.Now()
	h.marksMu.Lock()
	defer h.marksMu.Unlock()
	for _, e := range evs {
		mk := h.marks[e.RunID]
		mk.seq = max(mk.seq, e.Seq)
		if to, ok := events.StatusAfter(e.Type); ok && to.Terminal() {
			mk.endedAt = now
		}
		h.marks[e.RunID] = mk
	}
	if now.Sub(h.lastSweep) < h.cfg.ForgetAfter/2 {
		return
	}
	h.lastSweep = now
	for id, mk := range h.marks {
		if !mk.endedAt.IsZero() && now.Sub(mk.endedAt) > h.cfg.ForgetAfter {
			delete(h.marks, id)
		}
	}
}
