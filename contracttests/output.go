package contracttests

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// CheckStreamedOutput checks that no tool call streamed more into the log
// than its run allows: per tool item (an item started with a toolCallId),
// the deltas before the truncation marker, their text plus
// profile.DeltaEnvelopeBytes each, take at most the run's
// limits.maxStreamedOutputBytes (from its capability snapshot; the default
// without one), at most one delta is a marker (truncated, with the omitted
// byte count), and nothing is streamed after it. It returns every violation;
// an empty log passes.
func CheckStreamedOutput(evs []events.Envelope) error {
	limits := map[string]int{}
	items := map[string]*toolStream{} // tool items by run and item id
	var errs []error
	for _, e := range evs {
		p, err := e.DecodePayload()
		if err != nil {
			continue // CheckLog reports what does not decode
		}
		switch v := p.(type) { //nolint:exhaustive // only these payloads matter here
		case *events.SnapshotFrozenPayload:
			limits[e.RunID] = streamLimit(v.Snapshot)
		case *events.ItemStartedPayload:
			var call events.ToolCallData
			if json.Unmarshal(v.Data, &call) == nil && call.ToolCallID != "" {
				items[e.RunID+"/"+e.ItemID] = &toolStream{}
			}
		case *events.ItemDeltaPayload:
			s := items[e.RunID+"/"+e.ItemID]
			if s == nil {
				continue
			}
			limit := limits[e.RunID]
			if limit == 0 {
				limit = profile.DefaultMaxStreamedOutputBytes
			}
			if err := s.check(v, limit); err != nil && !s.failed {
				s.failed = true
				errs = append(errs, fmt.Errorf("run %s item %s seq %d: %w", e.RunID, e.ItemID, e.Seq, err))
			}
		}
	}
	return errors.Join(errs...)
}

// toolStream is what a tool item streamed so far.
type toolStream struct {
	bytes  int
	marked bool
	failed bool // a violation was reported; one per item is enough
}

// streamLimit is limits.maxStreamedOutputBytes of a capability snapshot (0
// when it sets none).
func streamLimit(snapshot json.RawMessage) int {
	var s struct {
		Profile struct {
			Limits struct {
				MaxStreamedOutputBytes int `json:"maxStreamedOutputBytes"`
			} `json:"limits"`
		} `json:"profile"`
	}
	_ = json.Unmarshal(snapshot, &s) // an unreadable snapshot means the default
	return s.Profile.Limits.MaxStreamedOutputBytes
}

// check adds one delta of a tool item to s.
func (s *toolStream) check(d *events.ItemDeltaPayload, limit int) error {
	switch {
	case s.marked:
		return errors.New("output streamed after the truncation marker")
	case d.Truncated:
		s.marked = true
		if d.OmittedBytes <= 0 {
			return errors.New("the truncation marker names no omitted bytes")
		}
		return nil
	}
	if s.bytes += len(d.Delta) + profile.DeltaEnvelopeBytes; s.bytes > limit {
		return fmt.Errorf("%d bytes of output streamed (with %d per delta), over the limit of %d", s.bytes, profile.DeltaEnvelopeBytes, limit)
	}
	return nil
}
