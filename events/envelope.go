package events

import (
	"encoding/json"
	"fmt"
)

// SchemaVersion is the protocol version every envelope carries.
const SchemaVersion = "v1"

// Envelope is one committed fact in a run's log. Seq starts at 1 and grows by
// exactly one per event of the same run; Kafka offsets are not seqs.
type Envelope struct {
	EventID           string          `json:"eventId"`
	RunID             string          `json:"runId"`
	Seq               int64           `json:"seq"`
	SchemaVersion     string          `json:"schemaVersion"`
	Type              Type            `json:"type"`
	OccurredAt        int64           `json:"occurredAt"`
	EmittedAt         int64           `json:"emittedAt"`
	PlatformSessionID string          `json:"platformSessionId,omitempty"`
	TenantID          string          `json:"tenantId"`
	ItemID            string          `json:"itemId,omitempty"`
	CommandID         string          `json:"commandId,omitempty"`
	Payload           json.RawMessage `json:"payload"`

	// shared is Payload as the fold that sealed the envelope in this
	// process decoded it (FoldShared), kept for SharedPayload; nil
	// otherwise. It is no part of the event: no encoder writes it.
	shared any
}

// Decode parses an envelope and checks the fields every reader relies on.
// Unknown fields are ignored so that newer writers stay readable. It
// decodes as Unmarshal does; an envelope as writers make it takes a path
// of its own (decodeEnvelope), without reflection.
func Decode(data []byte) (Envelope, error) {
	e, ok := decodeEnvelope(data)
	if !ok {
		var slow Envelope // apart from e, which would otherwise escape on every path
		if err := Unmarshal(data, &slow); err != nil {
			return Envelope{}, fmt.Errorf("decode event envelope: %w", err)
		}
		e = slow
	}
	if e.RunID == "" || e.Seq < 1 || e.Type == "" || e.SchemaVersion == "" {
		return Envelope{}, fmt.Errorf("decode event envelope: runId, seq>=1, type and schemaVersion are required (run %q seq %d type %q)", e.RunID, e.Seq, e.Type)
	}
	return e, nil
}

// DecodePayload unmarshals the payload into the type registered for e.Type.
func (e Envelope) DecodePayload() (any, error) {
	if fast, ok := fastPayloads[e.Type]; ok && len(e.Payload) > 0 {
		if p, ok := fast(e.Payload); ok {
			return p, nil
		}
	}
	p, err := NewPayload(e.Type)
	if err != nil {
		return nil, err
	}
	if len(e.Payload) > 0 {
		if err := Unmarshal(e.Payload, p); err != nil {
			return nil, &PayloadError{Type: e.Type, Seq: e.Seq, Err: err}
		}
	}
	return p, nil
}

// SharedPayload returns what DecodePayload returns, without decoding again
// when the fold that sealed e in this process kept its payload
// (FoldShared): the executor's engine reads a run's items from the events
// the executor has just folded. The value may be shared with that fold's
// state and every other reader of e: read it, never change it.
func (e Envelope) SharedPayload() (any, error) {
	if e.shared != nil {
		return e.shared, nil
	}
	return e.DecodePayload()
}

// Draft is an event before the executor gives it a seq, an id and times.
type Draft struct {
	Type      Type
	ItemID    string
	CommandID string
	Payload   any
}

// Identity names the run an event belongs to.
type Identity struct {
	RunID             string
	TenantID          string
	PlatformSessionID string
}

// Seal turns a draft into an envelope for the given run at seq.
func (d Draft) Seal(run Identity, seq int64, eventID string, nowMs int64) (Envelope, error) {
	raw, err := json.Marshal(d.Payload)
	if err != nil {
		return Envelope{}, fmt.Errorf("encode %s payload: %w", d.Type, err)
	}
	return Envelope{
		EventID:           eventID,
		RunID:             run.RunID,
		Seq:               seq,
		SchemaVersion:     SchemaVersion,
		Type:              d.Type,
		OccurredAt:        nowMs,
		EmittedAt:         nowMs,
		PlatformSessionID: run.PlatformSessionID,
		TenantID:          run.TenantID,
		ItemID:            d.ItemID,
		CommandID:         d.CommandID,
		Payload:           raw,
	}, nil
}
