package uistream

import (
	"context"

	"github.com/xbot-runtime/xbot/events"
)

// waiter waits for the first event of a run or session of one tenant.
type waiter struct {
	tenant string
	ch     chan struct{}
}

// AwaitRun returns true as soon as the hub has an event of run runID of
// tenant that shows the run exists (retained, or delivered after the call:
// any but a rejection, which a command for a run that does not exist gets),
// and false when ctx ends or the hub closes first. Another tenant's events of
// the same run id never count: for the caller, that run does not exist.
func (h *Hub) AwaitRun(ctx context.Context, tenantID, runID string) bool {
	w := &waiter{tenant: tenantID, ch: make(chan struct{})}
	if !h.addWaiter(func() { addTo(h.runWaiters, runID, w) }) {
		return false
	}
	defer h.dropWaiter(func() { dropFrom(h.runWaiters, runID, w) })
	if h.recent.seen(tenantID, runID) { // after registering: nothing falls in between
		return true
	}
	return h.wait(ctx, w)
}

// AwaitSession returns true as soon as the hub delivers an event of a run of
// session sessionID of tenant that shows the run exists, and false when ctx ends or the hub closes
// first.
func (h *Hub) AwaitSession(ctx context.Context, tenantID, sessionID string) bool {
	key := sessionKey{tenantID, sessionID}
	w := &waiter{tenant: tenantID, ch: make(chan struct{})}
	if !h.addWaiter(func() { addTo(h.sessionWaiters, key, w) }) {
		return false
	}
	defer h.dropWaiter(func() { dropFrom(h.sessionWaiters, key, w) })
	return h.wait(ctx, w)
}

func (h *Hub) wait(ctx context.Context, w *waiter) bool {
	select {
	case <-w.ch:
		h.mu.RLock()
		defer h.mu.RUnlock()
		return !h.closed
	case <-ctx.Done():
		return false
	}
}

func (h *Hub) addWaiter(add func()) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	add()
	return true
}

func (h *Hub) dropWaiter(drop func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	drop()
}

// wake releases the waiters of the runs and sessions in recs. Only records
// of a run someone waits for are decoded, unless someone waits for a session.
func (h *Hub) wake(recs []*Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sessions := len(h.sessionWaiters) > 0
	for _, r := range recs {
		ws := h.runWaiters[r.RunID()]
		if len(ws) == 0 && !sessions {
			continue
		}
		hd, err := r.Head()
		if err != nil || !showsRun(hd) {
			continue
		}
		release(h.runWaiters[hd.RunID], hd.TenantID)
		if sessions && hd.PlatformSessionID != "" {
			release(h.sessionWaiters[sessionKey{hd.TenantID, hd.PlatformSessionID}], hd.TenantID)
		}
	}
}

// showsRun reports whether an event means its run exists: every event but
// a rejection, which a command for a run that does not exist gets too.
func showsRun(h Head) bool { return h.Type != events.CommandRejected }

// release closes the channels of the waiters of tenant in ws and forgets them.
func release(ws map[*waiter]struct{}, tenant string) {
	for w := range ws {
		if w.tenant == tenant {
			close(w.ch)
			delete(ws, w)
		}
	}
}

// releaseAll closes every waiter's channel (the hub closed).
func releaseAll[K comparable](m map[K]map[*waiter]struct{}) {
	for _, ws := range m {
		for w := range ws {
			close(w.ch)
		}
	}
	clear(m)
}

func addTo[K comparable](m map[K]map[*waiter]struct{}, k K, w *waiter) {
	if m[k] == nil {
		m[k] = map[*waiter]struct{}{}
	}
	m[k][w] = struct{}{}
}

func dropFrom[K comparable](m map[K]map[*waiter]struct{}, k K, w *waiter) {
	delete(m[k], w)
	if len(m[k]) == 0 {
		delete(m, k)
	}
}
