package api_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api"
)

// fakeStore is an in-memory read model. WaitCommand blocks until put records
// the command or ctx ends.
type fakeStore struct {
	mu          sync.Mutex
	runs        map[string]api.RunRecord // by runId
	events      map[string][]api.EventRecord
	cmds        map[string]api.CommandRecord
	changed     chan struct{}
	waits       int
	listErr     error
	lastList    api.RunFilter
	grants      map[string][]events.PermissionGrant // by tenantId/platformSessionId
	grantsErr   error
	claimedRuns map[string][]string  // HoldSession's runs by tenantId/platformSessionId
	owners      map[string]string    // by tenantId/platformSessionId
	keys        map[string][2]string // CreateRun idempotency claims by tenantId/key: fingerprint, run id
	runErr      error                // GetRun's answer when set
	readErr     error                // the answer of every other read when set (failReads)
	grant       *api.GrantRecord     // SessionGrant's answer when set
	// sessions are GetSession's rows, by tenantId/platformSessionId.
	sessions map[string]api.SessionRecord
}

func newFakeStore() *fakeStore {
	return &fakeStore{runs: map[string]api.RunRecord{}, events: map[string][]api.EventRecord{},
		cmds: map[string]api.CommandRecord{}, changed: make(chan struct{}), grants: map[string][]events.PermissionGrant{}}
}

func (s *fakeStore) addRun(r api.RunRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[r.RunID] = r
}

func (s *fakeStore) put(c api.CommandRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cmds[c.CommandID] = c
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *fakeStore) GetRun(_ context.Context, tenantID, runID string) (api.RunRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runErr != nil {
		return api.RunRecord{}, s.runErr
	}
	r, ok := s.runs[runID]
	if !ok || r.TenantID != tenantID {
		return api.RunRecord{}, api.ErrNotFound
	}
	return r, nil
}

func (s *fakeStore) ListRuns(_ context.Context, f api.RunFilter) ([]api.RunRecord, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastList = f
	if s.listErr != nil {
		return nil, "", s.listErr
	}
	if f.After == "next-page" {
		return nil, "", nil // the fake's second page is its last
	}
	var out []api.RunRecord
	for _, r := range s.runs {
		if r.TenantID == f.TenantID && (f.Status == "" || r.Status == f.Status) {
			out = append(out, r)
		}
	}
	return out, "next-page", nil
}

func (s *fakeStore) ListEvents(_ context.Context, tenantID, runID string, afterSeq int64, limit, maxBytes int) ([]api.EventRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []api.EventRecord
	size := 0
	for _, e := range s.events[runID] {
		if e.TenantID != tenantID || e.Seq <= afterSeq || len(out) >= limit {
			continue
		}
		if size += len(e.Envelope); size > maxBytes && len(out) > 0 {
			break
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *fakeStore) GetCommand(_ context.Context, tenantID, commandID string) (api.CommandRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr != nil {
		return api.CommandRecord{}, s.readErr
	}
	c, ok := s.cmds[commandID]
	if !ok || c.TenantID != tenantID {
		return api.CommandRecord{}, api.ErrNotFound
	}
	return c, nil
}

func (s *fakeStore) WaitCommand(ctx context.Context, tenantID, commandID string) (api.CommandRecord, error) {
	s.mu.Lock()
	s.waits++
	s.mu.Unlock()
	for {
		s.mu.Lock()
		c, ok := s.cmds[commandID]
		ch := s.changed
		s.mu.Unlock()
		if ok && c.TenantID == tenantID {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return api.CommandRecord{}, ctx.Err()
		case <-ch:
		}
	}
}

func (s *fakeStore) waitCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waits
}

// fakeSender records envelopes and, when executor is set, plays the executor:
// the first command with a key for a run is accepted, later ones are duplicates.
type fakeSender struct {
	mu       sync.Mutex
	sent     []commands.Envelope
	err      error
	store    *fakeStore
	executor bool
	firsts   map[string]string // runId/key → commandId
	// decide, when set, changes the outcome the fake executor records.
	decide func(c commands.Envelope, row *api.CommandRecord)
	// onSend, when set, sees every command sent (after the fake executor).
	onSend func(c commands.Envelope)
	// first, when set, runs before anything else of a send, without the
	// sender's lock: a send that hands its command over and waits on.
	first func(ctx context.Context, c commands.Envelope)
}

func (f *fakeSender) Send(ctx context.Context, c commands.Envelope) error {
	if f.first != nil {
		f.first(ctx, c)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	f.sent = append(f.sent, c)
	if f.onSend != nil {
		f.onSend(c)
	}
	if !f.executor {
		return nil
	}
	row := api.CommandRecord{CommandID: c.CommandID, RunID: c.RunID, TenantID: c.TenantID, Type: string(c.Type),
		IdempotencyKey: c.IdempotencyKey, Outcome: "accepted", FirstOutcome: "accepted", UpdatedAt: time.Now()}
	if orig, ok := f.firsts[c.RunID+"/"+c.IdempotencyKey]; ok {
		row.Outcome, row.FirstOutcome, row.OriginalCommandID = "duplicate", "duplicate", orig
		row.OriginalOutcome = "accepted"
		row.Code = string(events.CodeDuplicateCommand)
	} else {
		f.firsts[c.RunID+"/"+c.IdempotencyKey] = c.CommandID
	}
	if f.decide != nil {
		f.decide(c, &row)
	}
	go f.store.put(row) // the outcome arrives later, as from the projector
	return nil
}

func (f *fakeSender) envelopes() []commands.Envelope {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]commands.Envelope(nil), f.sent...)
}

var errKafkaDown = errors.New("kafka: broker not available")

// errPostgresDown is the read models' database refusing connections, as the
// driver reports it: a network error.
var errPostgresDown = fmt.Errorf("failed to connect to `user=xbot database=xbot`: %w",
	&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)})

func (s *fakeStore) addEvent(ev api.EventRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events[ev.RunID] = append(s.events[ev.RunID], ev)
}

func (s *fakeStore) failRuns(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runErr = err
}

// failReads makes every read of the store answer err (nil: none).
func (s *fakeStore) failReads(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runErr, s.listErr, s.readErr = err, err, err
}

func (s *fakeStore) failList(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listErr = err
}

func (s *fakeStore) lastFilter() api.RunFilter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastList
}

// stall stops the fake executor: no outcome is ever recorded.
func (f *fakeSender) stall() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.executor = false
}

func (f *fakeSender) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}
