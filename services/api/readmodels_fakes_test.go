package api_test

import (
	"context"

	"github.com/xbot-runtime/xbot/projections/postgres"
)

// The fake store has no items, approvals or sessions: the endpoints that
// read them are tested against Postgres (readmodels_test.go).

func (s *fakeStore) ListItems(context.Context, postgres.ItemFilter) ([]postgres.Item, string, error) {
	return nil, "", nil
}

func (s *fakeStore) ListApprovals(context.Context, postgres.ApprovalFilter) ([]postgres.Approval, string, error) {
	return nil, "", nil
}

func (s *fakeStore) GetSession(context.Context, string, string) (postgres.Session, error) {
	return postgres.Session{}, postgres.ErrNotFound
}
