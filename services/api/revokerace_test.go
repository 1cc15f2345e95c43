package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
)

// TestARevokeReachesTheRunOfACreateInFlight: a create in a session read the
// session's grant and is sending its CreateRun when the grant is revoked.
// The revoke waits for the send, then sends its command to the new run too,
// which the read model does not show yet; a create after the revoke does
// not inherit the grant, before the read model has any revocation.
func TestARevokeReachesTheRunOfACreateInFlight(t *testing.T) {
	t.Parallel()
	e := newReadModelEnv(t)
	const session = "sess-race"
	granting, grant := e.grantingRun(t, session)

	inFlight, gate := make(chan string, 1), make(chan struct{})
	e.sender.onSend = func(c commands.Envelope) {
		if c.Type == commands.CreateRun && c.IdempotencyKey == "create-in-flight" {
			inFlight <- c.RunID
			<-gate
		}
	}
	t.Cleanup(func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	})
	c := e.apiAs(t, tokenA)
	call := func(method, path, key string, body any) chan error {
		done := make(chan error, 1)
		go func() {
			res, err := c.Send(context.Background(), method, path, body, "Idempotency-Key", key)
			if err == nil {
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusAccepted {
					err = fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
				}
			}
			done <- err
		}()
		return done
	}
	create := map[string]any{"agentId": "coder", "input": map[string]string{"content": "go"}, "platformSessionId": session}
	created := call(http.MethodPost, "/v1/runs?wait=0", "create-in-flight", create)
	newRun := <-inFlight
	revoked := call(http.MethodDelete, "/v1/sessions/"+session+"/grants/"+grant+"?wait=0", "revoke-1", nil)
	eventually.Succeeds(t, 10*time.Second, "the revoke waits for the create's send", func() error {
		var waiting int
		if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&waiting); err != nil {
			return err
		}
		if waiting != 1 {
			return fmt.Errorf("%d advisory locks waiting", waiting)
		}
		return nil
	})
	close(gate)
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	if err := <-revoked; err != nil {
		t.Fatal(err)
	}

	sent := e.sender.envelopes()
	var revokedRuns []string
	for _, env := range sent {
		switch {
		case env.Type == commands.CreateRun && env.RunID == newRun:
			p, err := env.DecodePayload()
			if err != nil {
				t.Fatal(err)
			}
			if gs := p.(*commands.CreateRunPayload).SessionGrants; len(gs) != 1 || gs[0].GrantID != grant {
				t.Fatalf("the create in flight inherits %+v, want the grant it read before the revoke", gs)
			}
		case env.Type == commands.RevokePermissionGrant:
			revokedRuns = append(revokedRuns, env.RunID)
		}
	}
	slices.Sort(revokedRuns)
	want := []string{granting.id(), newRun}
	slices.Sort(want)
	if !slices.Equal(revokedRuns, want) {
		t.Fatalf("the revoke went to %v, want the granting run and the new one %v", revokedRuns, want)
	}

	// A create after the revoke: the read model has no revocation yet.
	after := e.do(t, http.MethodPost, "/v1/runs?wait=0", tokenA, create, "Idempotency-Key", "create-after")
	if after.status != http.StatusAccepted {
		t.Fatalf("create after the revoke: %d %s", after.status, after.raw)
	}
	for _, env := range e.sender.envelopes()[len(sent):] {
		if env.Type != commands.CreateRun {
			continue
		}
		p, err := env.DecodePayload()
		if err != nil {
			t.Fatal(err)
		}
		if gs := p.(*commands.CreateRunPayload).SessionGrants; len(gs) != 0 {
			t.Errorf("a create after the revoke inherits %+v", gs)
		}
	}
	var listed struct {
		Grants []json.RawMessage `json:"grants"`
	}
	if r := e.do(t, http.MethodGet, "/v1/sessions/"+session+"/grants", tokenA, nil); r.status != http.StatusOK ||
		json.Unmarshal(r.raw, &listed) != nil || len(listed.Grants) != 0 {
		t.Errorf("the session lists %d %s, want no grant", r.status, r.raw)
	}
}

// grantingRun projects a run of tenant A's actor in session that gave a
// platform_session grant, and returns it with the grant's id.
func (e *readModelEnv) grantingRun(t *testing.T, session string) (*rmLog, string) {
	t.Helper()
	id := events.Identity{RunID: events.NewID("run"), TenantID: tenantA, PlatformSessionID: session}
	l := &rmLog{Log: eventstest.New(t, id, eventstest.Clock(rmEpoch, 10))}
	l.Accepted(events.NewID("cmd"), events.RunAcceptedPayload{AgentID: "coder", Input: events.UserInput{Content: "hi"},
		IdempotencyKey: "k-" + id.RunID, SandboxKey: events.SandboxKey{TenantID: tenantA, WorkspaceID: "default",
			AgentID: "coder", OwnerID: tenantA}})
	l.Started("")
	l.decide(l.awaitApproval(`{"command":"deploy"}`), "allow", "platform_session")
	e.project(t, l)
	return l, l.State().Grants[0].GrantID
}

// TestCreatesInASessionDoNotExhaustThePool: a create holds a connection of
// the read models' pool from its read of the session's grants until its
// send, and takes no other one meanwhile. Two creates in one session, with
// a pool of two connections, each hold one while their sends wait for each
// other: a create that read the database again under its hold would wait
// for a connection the other holds, forever. The creates after them get
// through as well.
func TestCreatesInASessionDoNotExhaustThePool(t *testing.T) {
	t.Parallel()
	const pool = 2
	sender := &barrierSender{n: pool, all: make(chan struct{})}
	e := newReadModelEnvWith(t, func(c *pgxpool.Config) { c.MaxConns = pool }, sender)
	const session = "sess-pool"
	_, grant := e.grantingRun(t, session)
	c := e.apiAs(t, tokenA)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const creates = 8
	errs := make(chan error, creates)
	for i := range creates {
		go func() {
			body := map[string]any{"agentId": "coder", "input": map[string]string{"content": "go"}, "platformSessionId": session}
			res, err := c.Send(ctx, http.MethodPost, "/v1/runs?wait=0", body, "Idempotency-Key", fmt.Sprintf("pool-%d", i))
			if err == nil {
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusAccepted {
					err = fmt.Errorf("create %d: %d %s", i, res.StatusCode, raw)
				}
			}
			errs <- err
		}()
	}
	for range creates {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	sent := sender.envelopes()
	for _, env := range sent {
		p, err := env.DecodePayload()
		if err != nil {
			t.Fatal(err)
		}
		if gs := p.(*commands.CreateRunPayload).SessionGrants; len(gs) != 1 || gs[0].GrantID != grant {
			t.Errorf("create %s inherits %+v, want %s", env.RunID, gs, grant)
		}
	}
	if len(sent) != creates {
		t.Errorf("%d creates sent, want %d", len(sent), creates)
	}
}

// barrierSender records what it is sent; its first n sends each wait until
// all n have come (or their context ends).
type barrierSender struct {
	n       int32
	arrived atomic.Int32
	all     chan struct{}
	mu      sync.Mutex
	sent    []commands.Envelope
}

func (s *barrierSender) Send(ctx context.Context, c commands.Envelope) error {
	s.mu.Lock()
	s.sent = append(s.sent, c)
	s.mu.Unlock()
	if s.arrived.Add(1) == s.n {
		close(s.all)
	}
	select {
	case <-s.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *barrierSender) envelopes() []commands.Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}
