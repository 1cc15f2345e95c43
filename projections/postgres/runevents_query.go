package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// Event is one row of run_events: a committed event as it was on the log.
type Event struct {
	RunID             string          `json:"runId"`
	Seq               int64           `json:"seq"`
	EventID           string          `json:"eventId"`
	Type              string          `json:"type"`
	TenantID          string          `json:"tenantId"`
	PlatformSessionID string          `json:"platformSessionId,omitempty"`
	ItemID            string          `json:"itemId,omitempty"`
	CommandID         string          `json:"commandId,omitempty"`
	OccurredAt        int64           `json:"occurredAt"`
	EmittedAt         int64           `json:"emittedAt"`
	Envelope          json.RawMessage `json:"envelope"` // the full event envelope, byte for byte as decoded
}

// DefaultEventPageBytes bounds the envelopes of one events page: 1 MiB keeps
// a page of a run with large outputs a quick response (a thousand events of
// 32 KiB would be 32 MiB), while pages of ordinary events still hold
// hundreds.
const DefaultEventPageBytes = 1 << 20

// ListEvents returns up to limit events of the run runID of tenantID with
// seq > afterSeq, in seq order (limit <= 0 means 100; at most 1000), and at
// most maxBytes bytes of envelopes (maxBytes <= 0 means DefaultEventPageBytes):
// the page ends before the event that would pass maxBytes, except that its
// first event is always returned, however large, so paging always
// progresses. A run unknown to the tenant has no events.
func (s *Queries) ListEvents(ctx context.Context, tenantID, runID string, afterSeq int64, limit, maxBytes int) ([]Event, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultEventPageBytes
	}
	// The window sums the sizes of the page's rows in seq order; only the
	// rows that fit are sent.
	rows, err := s.pool.Query(ctx, `SELECT run_id, seq, event_id, type, tenant_id, platform_session_id, item_id,
	command_id, occurred_at, emitted_at, envelope
FROM (SELECT *, sum(octet_length(envelope::text)) OVER (ORDER BY seq) AS upto, row_number() OVER (ORDER BY seq) AS n
	FROM (SELECT run_id, seq, event_id, type, tenant_id, platform_session_id, item_id, command_id, occurred_at,
		emitted_at, envelope
		FROM run_events WHERE run_id = $1 AND tenant_id = $2 AND seq > $3 ORDER BY seq LIMIT $4) AS page) AS sized
WHERE upto <= $5 OR n = 1 ORDER BY seq`,
		runID, tenantID, afterSeq, clampLimit(limit, defaultEventLimit, maxEventLimit), maxBytes)
	if err != nil {
		return nil, fmt.Errorf("list events of run %s: %w", runID, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Event, error) {
		var e Event
		err := row.Scan(&e.RunID, &e.Seq, &e.EventID, &e.Type, &e.TenantID, &e.PlatformSessionID, &e.ItemID,
			&e.CommandID, &e.OccurredAt, &e.EmittedAt, &e.Envelope)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("list events of run %s: %w", runID, err)
	}
	return out, nil
}

// StreamRunEvents returns up to limit events of run runID of tenantID with
// seq > afterSeq, decoded, in seq order (limit within ListEvents' bounds). A
// run unknown to the tenant has no events.
func (s *Queries) StreamRunEvents(ctx context.Context, tenantID, runID string, afterSeq int64, limit int) ([]events.Envelope, error) {
	rows, err := s.pool.Query(ctx, `SELECT envelope FROM run_events
WHERE run_id = $1 AND tenant_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
		runID, tenantID, afterSeq, clampLimit(limit, defaultEventLimit, maxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("stream events of run %s after %d: %w", runID, afterSeq, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (events.Envelope, error) {
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return events.Envelope{}, err
		}
		return events.Decode(raw)
	})
	if err != nil {
		return nil, fmt.Errorf("stream events of run %s after %d: %w", runID, afterSeq, err)
	}
	return out, nil
}
