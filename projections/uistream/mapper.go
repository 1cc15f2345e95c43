package uistream

import (
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// segment is where the reply's browser message stands. A segment runs from a
// start chunk to a finish (or abort) chunk; a paused reply's message is
// closed and reopened with the same messageId when it has more to show.
type segment int

const (
	segNone   segment = iota // nothing sent yet (the run has not started)
	segOpen                  // start sent, no finish yet
	segPaused                // closed with finish "tool-calls"; chunks are held until it reopens
	segEnded                 // the reply ended; nothing more is sent
)

// Mapper turns the events of one run, in seq order, into the chunks of the
// run's reply. It is deterministic: the same events always give the same
// chunks, so a stream rebuilt from the read model equals the live one. A
// Mapper is not safe for concurrent use.
type Mapper struct {
	runID string
	meta  Metadata
	seg   segment
	// stepOpen says a start-step was sent without its finish-step.
	stepOpen bool
	// inCall says a reasoning item began a model call whose
	// assistant_message has not started yet (both belong to one step).
	inCall bool
	items  map[string]*itemState
	// held are chunks of events that happened while the reply was paused;
	// they are sent when the message reopens.
	held []Chunk
	// finishReason is the last model response's finish reason, for the
	// reply's final finish chunk.
	finishReason string
	usage        events.Usage
	hasUsage     bool
	lastSeq      int64
	// status is the last data-status sent (status.go).
	status Status
	out    []Chunk
}

// NewMapper returns a mapper for the run runID, before its first event.
func NewMapper(runID string) *Mapper {
	return &Mapper{runID: runID, items: map[string]*itemState{},
		meta: Metadata{ResponseID: runID, InputIDs: []string{}, Origin: "input"}}
}

// Ended reports whether the reply has ended: its terminal event was mapped.
func (m *Mapper) Ended() bool { return m.seg == segEnded }

// LastSeq returns the seq of the last event mapped (0 before the first).
func (m *Mapper) LastSeq() int64 { return m.lastSeq }

// Next maps the next event of the run. It fails when e is not the run's
// next event or its payload does not decode; the mapper is then unchanged.
func (m *Mapper) Next(e events.Envelope) ([]Chunk, error) {
	if e.RunID != m.runID || e.Seq != m.lastSeq+1 {
		return nil, fmt.Errorf("map run %s: got run %s seq %d, want seq %d", m.runID, e.RunID, e.Seq, m.lastSeq+1)
	}
	p, err := e.DecodePayload()
	if err != nil {
		return nil, fmt.Errorf("map run %s seq %d: %w", m.runID, e.Seq, err)
	}
	m.out = nil
	m.apply(e, p)
	m.statusChanged(e, p)
	m.lastSeq = e.Seq
	out := m.out
	m.out = nil
	return out, nil
}

func (m *Mapper) apply(e events.Envelope, p any) {
	switch e.Type {
	case events.RunAccepted:
		m.accepted(e, p.(*events.RunAcceptedPayload))
	case events.CapabilitySnapshotFrozen:
		m.snapshotFrozen(p.(*events.SnapshotFrozenPayload))
	case events.RunStarted:
		m.open()
	case events.RunPaused:
		m.paused(p.(*events.RunPausedPayload))
	case events.RunResumed:
		m.open()
	case events.RunQueued:
		m.queued(p.(*events.RunQueuedPayload))
	case events.RunCompleted:
		m.completed()
	case events.RunFailed:
		v := p.(*events.RunFailedPayload)
		m.failed(errorText(v.ErrorCode, v.Message))
	case events.RunExpired:
		m.expired()
	case events.RunCancelled:
		m.cancelled(p.(*events.RunCancelledPayload).Reason)
	case events.CommandApplied:
		m.commandApplied(e, p.(*events.CommandAppliedPayload))
	case events.ItemStarted:
		m.itemStarted(e.ItemID, p.(*events.ItemStartedPayload))
	case events.ItemDelta:
		m.itemDelta(e.ItemID, p.(*events.ItemDeltaPayload).Delta)
	case events.ItemCompleted:
		m.itemCompleted(e.ItemID, p.(*events.ItemCompletedPayload))
	case events.ItemFailed:
		m.itemFailed(e.ItemID, p.(*events.ItemFailedPayload))
	case events.ItemAwaitingApproval:
		m.awaitingApproval(e.ItemID, p.(*events.ItemAwaitingApprovalPayload))
	case events.ApprovalDecisionSubmitted:
		m.decision(e.ItemID, p.(*events.ApprovalDecisionPayload))
	case events.ContextCompacted:
		m.compacted(p.(*events.ContextCompactedPayload))
	case events.RunCheckpointRestored, events.CommandAccepted, events.CommandRejected, events.CommandNoEffect,
		events.CommandDuplicate, events.PermissionGrantApplied, events.PermissionGrantRevoked, events.SandboxAttached:
		// Not part of the reply's message: the runs, items and commands
		// read models show them.
	}
}

// emit sends c in the current segment: held while paused, dropped after the
// reply ended, and opening the message first if it was never opened.
func (m *Mapper) emit(cs ...Chunk) {
	switch m.seg {
	case segNone:
		m.open()
		m.out = append(m.out, cs...)
	case segOpen:
		m.out = append(m.out, cs...)
	case segPaused:
		m.held = append(m.held, cs...)
	case segEnded:
	}
}

// open sends the start chunk unless the message is open, then what was held.
func (m *Mapper) open() {
	if m.seg == segOpen || m.seg == segEnded {
		return
	}
	m.seg = segOpen
	m.out = append(m.out, startChunk(m.runID, m.snapshot()))
	m.out = append(m.out, m.held...)
	m.held = nil
}

// close ends the current segment with a finish chunk (and the open step's
// finish-step) and moves to next.
func (m *Mapper) close(next segment, last ...Chunk) {
	m.open()
	if m.stepOpen {
		m.out = append(m.out, Chunk{Type: "finish-step"})
		m.stepOpen = false
	}
	m.inCall = false
	m.out = append(m.out, last...)
	m.seg = next
}

// beginStep starts a model call's step, ending the previous one.
func (m *Mapper) beginStep() {
	if m.stepOpen {
		m.emit(Chunk{Type: "finish-step"})
	}
	m.emit(Chunk{Type: "start-step"})
	m.stepOpen = m.seg == segOpen
}

// snapshot is the reply's metadata as of now; chunks get their own copy.
func (m *Mapper) snapshot() Metadata {
	s := m.meta
	s.InputIDs = append([]string{}, m.meta.InputIDs...)
	s.RetractedPartIDs = append([]string(nil), m.meta.RetractedPartIDs...)
	if m.hasUsage {
		u := m.usage
		s.Usage = &u
	}
	return s
}

// metadataChanged publishes the metadata while the message is open; a closed
// message gets it with the start chunk that reopens it.
func (m *Mapper) metadataChanged() {
	if m.seg == segOpen {
		m.out = append(m.out, metadataChunk(m.snapshot()))
	}
}

// errorText is never empty: the SDK requires errorText, and Fold accepts an
// item.failed without an errorCode.
func errorText(code, msg string) string {
	if code == "" {
		code = "failed"
	}
	if msg == "" {
		return code
	}
	return code + ": " + msg
}
