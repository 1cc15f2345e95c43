package imgateway

import (
	"net/http"
	"sync"

	"github.com/coder/websocket"

	"github.com/xbot-runtime/xbot/projections/im"
)

// seenWindow bounds the message ids an endpoint remembers for dedupe: far
// more than one reconnect redelivers, a few hundred KiB at most.
const seenWindow = 4096

// endpoint is one mounted endpoint of one generation and its one client.
type endpoint struct {
	mount
	// history serves GET <path>/history (historyHandler).
	history http.Handler

	mu  sync.Mutex
	cur *conn
	// retired is the close code of the retired generation; 0 while it serves.
	retired websocket.StatusCode
	// seen are the ids of the messages delivered lately, oldest first in
	// order; kept across the endpoint's connections, so a redelivery after a
	// reconnect is dropped too.
	seen  map[string]bool
	order []string
	// approvals are the buttons' approvals delivered lately, by approval id:
	// a press of one is decided without waiting for the read model to show
	// the request. Bounded like seen.
	approvals map[string]im.Approval
}

func newEndpoint(m mount) *endpoint {
	return &endpoint{mount: m, seen: map[string]bool{}, approvals: map[string]im.Approval{}}
}

// first reports whether the endpoint is mounted at /sandbox, the one path a
// read-only token may connect to.
func (e *endpoint) first() bool { return e.Path == "/sandbox" }

// attach makes c the endpoint's client and returns the one it replaced,
// or, when the endpoint's generation is retired, the code to close c with.
func (e *endpoint) attach(c *conn) (*conn, websocket.StatusCode) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.retired != 0 {
		return nil, e.retired
	}
	old := e.cur
	e.cur = c
	return old, 0
}

// detach forgets c if it is still the endpoint's client.
func (e *endpoint) detach(c *conn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cur == c {
		e.cur = nil
	}
}

// retire ends the endpoint's generation: its client is closed with code.
func (e *endpoint) retire(code websocket.StatusCode, reason string) {
	e.mu.Lock()
	e.retired = code
	c := e.cur
	e.cur = nil
	e.mu.Unlock()
	if c != nil {
		c.close(code, reason)
	}
}

// markSeen records id and reports whether it was new.
func (e *endpoint) markSeen(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.seen[id] {
		return false
	}
	e.seen[id] = true
	e.order = append(e.order, id)
	if len(e.order) > seenWindow {
		delete(e.seen, e.order[0])
		e.order = e.order[1:]
	}
	return true
}

// noteApprovals remembers the approvals of m's buttons by approval id.
func (e *endpoint) noteApprovals(m im.Message) {
	if m.Request == nil || m.Request.ApprovalID == "" || len(m.Actions) == 0 || m.Actions[0].Approval == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.approvals) >= seenWindow {
		clear(e.approvals)
	}
	a := *m.Actions[0].Approval
	e.approvals[m.Request.ApprovalID] = im.Approval{RunID: a.RunID, ItemID: a.ItemID}
}

// approval returns the run and item of a delivered approval request.
func (e *endpoint) approval(id string) (im.Approval, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.approvals[id]
	return a, ok
}

// forget drops id, so a message whose frame could not be written is
// delivered again.
func (e *endpoint) forget(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.seen, id)
}
