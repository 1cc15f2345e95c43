package api_test

import (
	"context"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api"
)

// The fake store has no items, approvals or sessions: the endpoints that
// read them are tested against Postgres (readmodels_test.go). Its session
// grants are set by tests.

func (s *fakeStore) ListItems(context.Context, api.ItemFilter) ([]api.ItemRecord, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, "", s.readErr
}

func (s *fakeStore) ListApprovals(context.Context, api.ApprovalFilter) ([]api.ApprovalRecord, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nil, "", s.readErr
}

func (s *fakeStore) GetSession(_ context.Context, tenantID, sessionID string) (api.SessionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr != nil {
		return api.SessionRecord{}, s.readErr
	}
	if r, ok := s.sessions[tenantID+"/"+sessionID]; ok {
		return r, nil
	}
	return api.SessionRecord{}, api.ErrNotFound
}

// HoldSession returns the grants tests set; the fake has no lock, and
// records nothing but the run's claim.
func (s *fakeStore) HoldSession(_ context.Context, tenantID, sessionID, runID string) (api.SessionHold, []events.PermissionGrant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grantsErr != nil {
		return nil, nil, s.grantsErr
	}
	if s.claimedRuns == nil {
		s.claimedRuns = make(map[string][]string)
	}
	k := tenantID + "/" + sessionID
	s.claimedRuns[k] = append(s.claimedRuns[k], runID)
	return fakeHold{}, s.grants[k], nil
}

type fakeHold struct{}

func (fakeHold) Release(context.Context, bool) error { return nil }

func (s *fakeStore) RevokeSessionGrant(_ context.Context, tenantID, sessionID, _ string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.claimedRuns[tenantID+"/"+sessionID], s.grantsErr
}

func (s *fakeStore) ClaimSession(_ context.Context, tenantID, sessionID, actorID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners == nil {
		s.owners = make(map[string]string)
	}
	k := tenantID + "/" + sessionID
	if _, ok := s.owners[k]; !ok {
		s.owners[k] = actorID
	}
	return s.owners[k], nil
}

func (s *fakeStore) ClaimIdempotencyKey(_ context.Context, tenantID, key, fingerprint, runID string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = make(map[string][2]string)
	}
	k := tenantID + "/" + key
	if _, ok := s.keys[k]; !ok {
		s.keys[k] = [2]string{fingerprint, runID}
	}
	return s.keys[k][0], s.keys[k][1], nil
}

func (s *fakeStore) failGrants(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grantsErr = err
}

func (s *fakeStore) setGrants(tenantID, sessionID string, g ...events.PermissionGrant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants[tenantID+"/"+sessionID] = g
}
