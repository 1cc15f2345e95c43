package api_test

import (
	"context"

	"github.com/xbot-runtime/xbot/services/api"
)

// The fake store has at most one grant row (its grant, of any session the
// caller names): the grant endpoints are tested against the whole system
// (services/systemtest/grants_test.go).

func (s *fakeStore) SessionGrantsInForce(context.Context, string, string) ([]api.GrantRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, s.readErr
}

func (s *fakeStore) SessionGrant(_ context.Context, _, _, grantID string) (api.GrantRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr != nil || s.grant == nil || s.grant.GrantID != grantID {
		return api.GrantRecord{}, false, s.readErr
	}
	return *s.grant, true, nil
}
