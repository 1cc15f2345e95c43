package uistream

import (
	"errors"
	"sync"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
)

// HubConfig configures a Hub.
type HubConfig struct {
	// Buffer is how many events a subscriber may fall behind before the hub
	// cuts it off. Default 1024: a model streams ~20 deltas a second, so a
	// client gets close to a minute of slack before it is dropped.
	Buffer int
	// Retain is how many bytes of the most recent records the hub keeps, so
	// that a stream opened before the read model has a run's latest events
	// starts from them instead of waiting for it. Default 16 MiB: tens of
	// thousands of events, seconds of a busy log, while the read model lags
	// by milliseconds.
	Retain int
	// Logger is required.
	Logger *zap.Logger
}

func (c *HubConfig) setDefaults() {
	if c.Buffer == 0 {
		c.Buffer = 1024
	}
	if c.Retain == 0 {
		c.Retain = 16 << 20
	}
}

// Validate reports every problem of the configuration (after defaults).
func (c HubConfig) Validate() error {
	var errs []error
	if c.Buffer < 1 {
		errs = append(errs, errors.New("uistream hub: Buffer must be at least 1"))
	}
	if c.Retain < 0 {
		errs = append(errs, errors.New("uistream hub: Retain must not be negative"))
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
	// waiters wait for a run or a session to show up (await.go).
	runWaiters     map[string]map[*waiter]struct{}
	sessionWaiters map[sessionKey]map[*waiter]struct{}

	recent retained
}

type sessionKey struct{ tenant, session string }

// NewHub returns a hub. Feed it with Publish or Deliver.
func NewHub(cfg HubConfig) (*Hub, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Hub{cfg: cfg, byRun: map[string]map[*Subscription]struct{}{},
		bySession: map[sessionKey]map[*Subscription]struct{}{}, runWaiters: map[string]map[*waiter]struct{}{},
		sessionWaiters: map[sessionKey]map[*waiter]struct{}{}, recent: newRetained(cfg.Retain)}, nil
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
// off) and releases every waiter (AwaitRun answers false), so open streams
// end; call it when the API shuts down.
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
	releaseAll(h.runWaiters)
	releaseAll(h.sessionWaiters)
}

// Deliver publishes committed records of the events topic; the wiring calls
// it with each batch of a kafka.Tail, from one goroutine, in offset order per
// partition. A record is decoded only when a subscriber or a waiter needs
// it (Record): the key tells its run. Deliver replaces each record's Value
// by a copy it retains (a fetched value holds its whole fetch buffer), so
// readers after it read the copy. A record that is not an event
// envelope cannot be streamed and is logged and skipped (the projector
// dead-letters it, so the read model never shows it either).
func (h *Hub) Deliver(recs []*Record) {
	h.recent.add(recs)
	var slow []*Subscription
	h.mu.RLock()
	sessions := len(h.bySession) > 0
	for _, r := range recs {
		slow = h.deliver(r, sessions, slow)
	}
	waiting := len(h.runWaiters) > 0 || len(h.sessionWaiters) > 0
	h.mu.RUnlock()
	if waiting {
		h.wake(recs)
	}
	if len(slow) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range slow {
		h.removeLocked(s)
	}
}

// deliver fans r out to its run's subscribers and, when there are session
// subscribers, to its session's.
func (h *Hub) deliver(r *Record, sessions bool, slow []*Subscription) []*Subscription {
	byRun := h.byRun[r.RunID()]
	if len(byRun) == 0 && !sessions {
		return slow
	}
	var bySession map[*Subscription]struct{}
	if sessions {
		hd, err := r.Head()
		if err != nil {
			h.skip(r, err)
			return slow
		}
		if hd.PlatformSessionID != "" {
			bySession = h.bySession[sessionKey{hd.TenantID, hd.PlatformSessionID}]
		}
	}
	if len(byRun) == 0 && len(bySession) == 0 {
		return slow
	}
	e, err := r.Envelope()
	if err != nil {
		h.skip(r, err)
		return slow
	}
	if e.RunID != r.RunID() { // a key that is not the run's: route by the envelope
		byRun = h.byRun[e.RunID]
	}
	slow = h.fanOut(byRun, e, slow)
	return h.fanOut(bySession, e, slow)
}

func (h *Hub) skip(r *Record, err error) {
	h.cfg.Logger.Warn("skipping a record that is not an event", zap.Int32("partition", r.Partition),
		zap.Int64("offset", r.Offset), zap.Error(err))
}

// Publish hands decoded events to their run's and session's subscribers, as
// Deliver does records. A run's events must be published in seq order, as
// the events topic holds them.
func (h *Hub) Publish(evs ...events.Envelope) {
	recs := make([]*Record, len(evs))
	for i, e := range evs {
		recs[i] = decoded(e)
	}
	h.Deliver(recs)
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

// LastSeq returns the last seq of runID among the records the hub retains,
// or 0 when it retains none. Events up to it are committed, so a reader can
// wait for the read model to have them (or take them from Recent).
func (h *Hub) LastSeq(runID string) int64 { return h.recent.lastSeq(runID) }

// Knows reports whether the hub retains an event of run runID of tenant
// that shows the run exists: the caller needs no read model to know it.
func (h *Hub) Knows(tenantID, runID string) bool { return h.recent.seen(tenantID, runID) }

// Recent returns the retained events of run runID of tenant with seq >
// afterSeq, in seq order; they are shared and must not be modified. It
// may begin above afterSeq+1 (older ones were not retained): the read model
// has those.
func (h *Hub) Recent(tenantID, runID string, afterSeq int64) []*events.Envelope {
	return h.recent.events(tenantID, runID, afterSeq)
}
