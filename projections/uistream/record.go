package uistream

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/xbot-runtime/xbot/events"
)

// Record is a committed record of the events topic, as a tail of it
// delivers it, decoded only as far as a reader asks and at most once: the
// key names the run without decoding anything, Head decodes the envelope's
// routing fields without its payload, Envelope the whole envelope. Every
// reader of one tail (the hub, the API's command outcomes) shares the
// decoding. It is safe for concurrent use; pass it by pointer.
type Record struct {
	Partition int32
	Offset    int64
	// Key is the record's key: the run id on the events topic.
	Key   string
	Value []byte

	headOnce sync.Once
	head     Head
	headErr  error

	envOnce  sync.Once
	envReady atomic.Bool // set once env holds the decoded envelope
	env      *events.Envelope
	envErr   error
}

// Head is what routes an event to its readers: the envelope without its
// payload.
type Head struct {
	RunID             string      `json:"runId"`
	Seq               int64       `json:"seq"`
	Type              events.Type `json:"type"`
	TenantID          string      `json:"tenantId"`
	PlatformSessionID string      `json:"platformSessionId,omitempty"`
	CommandID         string      `json:"commandId,omitempty"`
}

// decoded returns a record whose envelope is already decoded.
func decoded(e events.Envelope) *Record {
	r := &Record{Key: e.RunID}
	r.envOnce.Do(func() { r.env = &e; r.envReady.Store(true) })
	return r
}

// RunID is the run the record belongs to: its key, or the envelope's runId
// for a record without one.
func (r *Record) RunID() string {
	if r.Key != "" {
		return r.Key
	}
	h, _ := r.Head()
	return h.RunID
}

// Head decodes the envelope's routing fields (once); it is free when the
// whole envelope was decoded first.
func (r *Record) Head() (Head, error) {
	r.headOnce.Do(func() {
		if r.envReady.Load() {
			r.head = headOf(r.env)
			return
		}
		r.headErr = events.Unmarshal(r.Value, &r.head)
		if r.headErr == nil && (r.head.RunID == "" || r.head.Seq < 1 || r.head.Type == "") {
			r.headErr = fmt.Errorf("decode event head: runId, seq>=1 and type are required (run %q seq %d type %q)",
				r.head.RunID, r.head.Seq, r.head.Type)
		}
		if r.headErr != nil {
			r.headErr = fmt.Errorf("decode event head: %w", r.headErr)
		}
	})
	return r.head, r.headErr
}

// Envelope decodes the whole envelope (once). It is shared with every other
// reader and must not be modified.
func (r *Record) Envelope() (*events.Envelope, error) {
	r.envOnce.Do(func() {
		e, err := events.Decode(r.Value)
		if err != nil {
			r.envErr = err
			return
		}
		r.env = &e
		r.envReady.Store(true)
	})
	return r.env, r.envErr
}

func headOf(e *events.Envelope) Head {
	return Head{RunID: e.RunID, Seq: e.Seq, Type: e.Type, TenantID: e.TenantID,
		PlatformSessionID: e.PlatformSessionID, CommandID: e.CommandID}
}

// size is what retaining the record costs, roughly.
func (r *Record) size() int {
	if r.Value != nil {
		return len(r.Value) + len(r.Key) + recordOverhead
	}
	if e, err := r.Envelope(); err == nil {
		return len(e.Payload) + 2*recordOverhead
	}
	return recordOverhead
}

// recordOverhead is the bookkeeping of one retained record beyond its
// bytes: the struct, its decoded head, pointers in the hub's indexes.
const recordOverhead = 256
