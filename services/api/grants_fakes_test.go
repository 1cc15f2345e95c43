package api_test

import (
	"context"

	"github.com/xbot-runtime/xbot/services/api"
)

// The fake store has no grant rows: the grant endpoints are tested against
// the whole system (services/systemtest/grants_test.go).

func (s *fakeStore) SessionGrantsInForce(context.Context, string, string) ([]api.GrantRecord, error) {
	return nil, nil
}

func (s *fakeStore) SessionGrant(context.Context, string, string, string) (api.GrantRecord, bool, error) {
	return api.GrantRecord{}, false, nil
}
