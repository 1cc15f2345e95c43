package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/xbot-runtime/xbot/events"
)

// EventPages reads a run's events after afterSeq page by page (GET
// /v1/runs/{runId}/events), calling fn with each page in seq order, and
// returns nil at the first empty page: the run has no more events yet.
// limit 0 takes the server's default page size. It returns the first error
// answer (a *Problem), fn's error, or an error when a page does not move
// nextAfterSeq forward (paging would never end).
func (c *Client) EventPages(ctx context.Context, runID string, afterSeq int64, limit int, fn func(EventPage) error) error {
	for after := afterSeq; ; {
		p, err := c.ListEvents(ctx, runID, after, limit)
		if err != nil {
			return err
		}
		if len(p.Events) == 0 {
			return nil
		}
		if p.NextAfterSeq <= after {
			return fmt.Errorf("events of run %s after seq %d: the page of %d events ends at nextAfterSeq %d",
				runID, after, len(p.Events), p.NextAfterSeq)
		}
		if err := fn(p); err != nil {
			return err
		}
		after = p.NextAfterSeq
	}
}

// DecodePayload decodes ev's payload as the payload type T of its event type
// (events.ItemFailedPayload for runtime.item.failed, …). It fails when T is
// not the type the catalog registers for ev.Type, so a reader never reads
// one event's payload as another's.
func DecodePayload[T any](ev Event) (T, error) {
	var out T
	want, err := events.NewPayload(ev.Type)
	if err != nil {
		return out, err
	}
	if _, ok := want.(*T); !ok {
		return out, fmt.Errorf("run %s seq %d: %s carries a %T, not a %T", ev.RunID, ev.Seq, ev.Type, want, &out)
	}
	if len(ev.Payload) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(ev.Payload, &out); err != nil {
		return out, &events.PayloadError{Type: ev.Type, Seq: ev.Seq, Err: err}
	}
	return out, nil
}
