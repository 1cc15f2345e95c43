package stack

import (
	"context"
	"errors"
	"fmt"
	"time"

	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/services/api"
)

// APIStore adapts the Postgres read models to what the API reads: it
// converts rows to the API's records and reports pgview.ErrNotFound and
// pgview.ErrInvalidCursor as api.ErrNotFound and api.ErrInvalidCursor (the
// original error stays in the chain).
func APIStore(s *pgview.Queries) *APIReadModels {
	if s == nil {
		panic("stack.APIStore: store is required")
	}
	return &APIReadModels{s}
}

// APIReadModels is the query side of the Postgres read models seen through the API's interfaces; it
// implements api.Store and api.StreamStore. Methods whose types the API
// shares (events, grants, session owners) are the store's own.
type APIReadModels struct{ *pgview.Queries }

var (
	_ api.Store       = (*APIReadModels)(nil)
	_ api.StreamStore = (*APIReadModels)(nil)
)

// apiErr maps the read models' sentinel errors to the API's.
func apiErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pgview.ErrNotFound):
		return fmt.Errorf("%w: %w", api.ErrNotFound, err)
	case errors.Is(err, pgview.ErrInvalidCursor):
		return fmt.Errorf("%w: %w", api.ErrInvalidCursor, err)
	}
	return err
}

// GetRun reads one run of tenantID.
func (s *APIReadModels) GetRun(ctx context.Context, tenantID, runID string) (api.RunRecord, error) {
	r, err := s.Queries.GetRun(ctx, tenantID, runID)
	return runRecord(r), apiErr(err)
}

// ListRuns reads a page of runs and the cursor of the next one.
func (s *APIReadModels) ListRuns(ctx context.Context, f api.RunFilter) ([]api.RunRecord, string, error) {
	rows, next, err := s.Queries.ListRuns(ctx, pgview.RunFilter(f))
	return convert(rows, runRecord), next, apiErr(err)
}

// ListEvents reads a page of a run's events in seq order.
func (s *APIReadModels) ListEvents(ctx context.Context, tenantID, runID string, afterSeq int64, limit, maxBytes int) ([]api.EventRecord, error) {
	rows, err := s.Queries.ListEvents(ctx, tenantID, runID, afterSeq, limit, maxBytes)
	return convert(rows, func(e pgview.Event) api.EventRecord { return api.EventRecord(e) }), apiErr(err)
}

// GetCommand reads a command's latest outcome.
func (s *APIReadModels) GetCommand(ctx context.Context, tenantID, commandID string) (api.CommandRecord, error) {
	c, err := s.Queries.GetCommand(ctx, tenantID, commandID)
	return api.CommandRecord(c), apiErr(err)
}

// WaitCommand waits for a command's outcome to reach the read model.
func (s *APIReadModels) WaitCommand(ctx context.Context, tenantID, commandID string) (api.CommandRecord, error) {
	c, err := s.Queries.WaitCommand(ctx, tenantID, commandID)
	return api.CommandRecord(c), apiErr(err)
}

// ListItems reads a page of a run's items in log order.
func (s *APIReadModels) ListItems(ctx context.Context, f api.ItemFilter) ([]api.ItemRecord, string, error) {
	rows, next, err := s.Queries.ListItems(ctx, pgview.ItemFilter(f))
	return convert(rows, func(it pgview.Item) api.ItemRecord { return api.ItemRecord(it) }), next, apiErr(err)
}

// ListApprovals reads a page of a tenant's approvals, newest request first.
func (s *APIReadModels) ListApprovals(ctx context.Context, f api.ApprovalFilter) ([]api.ApprovalRecord, string, error) {
	rows, next, err := s.Queries.ListApprovals(ctx, pgview.ApprovalFilter(f))
	return convert(rows, func(a pgview.Approval) api.ApprovalRecord { return api.ApprovalRecord(a) }), next, apiErr(err)
}

// GetSession reads the summary of a platform session of tenantID.
func (s *APIReadModels) GetSession(ctx context.Context, tenantID, sessionID string) (api.SessionRecord, error) {
	r, err := s.Queries.GetSession(ctx, tenantID, sessionID)
	return api.SessionRecord(r), apiErr(err)
}

// StreamSessionRuns reads a session's runs in stream order after a position.
func (s *APIReadModels) StreamSessionRuns(ctx context.Context, tenantID, sessionID string, afterCreated time.Time, afterRunID string, limit int) ([]api.StreamRun, error) {
	rows, err := s.Queries.StreamSessionRuns(ctx, tenantID, sessionID, afterCreated, afterRunID, limit)
	return convert(rows, func(r pgview.StreamRun) api.StreamRun { return api.StreamRun(r) }), apiErr(err)
}

// StreamSessionHead reads the latest run of a session.
func (s *APIReadModels) StreamSessionHead(ctx context.Context, tenantID, sessionID string) (api.StreamRun, error) {
	r, err := s.Queries.StreamSessionHead(ctx, tenantID, sessionID)
	return api.StreamRun(r), apiErr(err)
}

// StreamSessionRun reads one run of a session.
func (s *APIReadModels) StreamSessionRun(ctx context.Context, tenantID, sessionID, runID string) (api.StreamRun, error) {
	r, err := s.Queries.StreamSessionRun(ctx, tenantID, sessionID, runID)
	return api.StreamRun(r), apiErr(err)
}

// convert maps every row; nil stays nil.
func convert[R, T any](rows []R, f func(R) T) []T {
	if rows == nil {
		return nil
	}
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// runRecord is a runs row as the API reads it.
func runRecord(r pgview.Run) api.RunRecord {
	return api.RunRecord{RunID: r.RunID, TenantID: r.TenantID, PlatformSessionID: r.PlatformSessionID,
		AgentID: r.AgentID, ParentRunID: r.ParentRunID, Status: r.Status, PauseReason: r.PauseReason,
		ErrorCode: r.ErrorCode, CancelReason: r.CancelReason, Input: r.Input, SandboxKey: r.SandboxKey,
		Metadata: r.Metadata, LastSeq: r.LastSeq, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		SnapshotHash: r.SnapshotHash, Usage: api.Usage(r.Usage), AcceptedPartition: r.AcceptedPartition,
		AcceptedOffset: r.AcceptedOffset, QueuePosition: r.QueuePosition}
}
