package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/stack"
)

// readModelEnv is an API over a real, migrated Postgres read model of its own.
type readModelEnv struct {
	*env
	store  *postgres.Store
	pool   *pgxpool.Pool
	offset int64
}

func newReadModelEnv(t *testing.T) *readModelEnv {
	t.Helper()
	return newReadModelEnvWith(t, nil, nil)
}

// newReadModelEnvWith is newReadModelEnv whose API reads through a pool
// configured with change (nil: the projector's own) and sends through
// sender (nil: the env's fakeSender).
func newReadModelEnvWith(t *testing.T, change func(*pgxpool.Config), sender api.CommandSender) *readModelEnv {
	t.Helper()
	store, pool := postgrestest.New(t)
	reads := store
	if change != nil {
		reads = postgrestest.Reconfigured(t, pool, change)
	}
	cfg := api.Config{Tokens: map[string]string{tokenA: tenantA, tokenB: tenantB}}
	fake := &fakeSender{}
	if sender == nil {
		sender = fake
	}
	a, err := api.New(cfg, stack.APIStore(reads.Queries), sender, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return &readModelEnv{env: &env{srv: srv, sender: fake}, store: store, pool: pool}
}

// project applies the logs' events not projected yet, interleaved, as one
// batch.
func (e *readModelEnv) project(t *testing.T, logs ...*rmLog) {
	t.Helper()
	fresh := make([][]events.Envelope, len(logs))
	for i, l := range logs {
		all := l.Events()
		fresh[i], l.projected = all[l.projected:], len(all)
	}
	var recs []postgres.Record
	for _, ev := range eventstest.Interleave(fresh...) {
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, postgres.Record{Partition: 0, Offset: e.offset, Value: raw})
		e.offset++
	}
	if err := e.store.ApplyBatch(context.Background(), postgres.ProjectorName, "xbot.events.v1", recs); err != nil {
		t.Fatal(err)
	}
}

// rmLog is a run's log as the executor writes it (eventstest), events 10 ms
// apart; projected counts the events project has applied.
type rmLog struct {
	*eventstest.Log
	projected int
}

// acceptedRMLog accepts a run of tenant in session at createdAt (Unix ms)
// with input and leaves it queued.
func acceptedRMLog(t *testing.T, tenant, session, input string, createdAt int64) *rmLog {
	t.Helper()
	id := events.Identity{RunID: events.NewID("run"), TenantID: tenant, PlatformSessionID: session}
	l := &rmLog{Log: eventstest.New(t, id, eventstest.Clock(createdAt, 10))}
	l.Accepted(events.NewID("cmd"), events.RunAcceptedPayload{
		AgentID: "coder", Input: events.UserInput{Content: input}, IdempotencyKey: "k-" + id.RunID,
		SandboxKey: events.SandboxKey{TenantID: tenant, WorkspaceID: "default", AgentID: "coder", OwnerID: "u"}})
	return l
}

// newRMLog starts a run (accepted, started) of tenant in session at
// createdAt (Unix ms).
func newRMLog(t *testing.T, tenant, session string, createdAt int64) *rmLog {
	t.Helper()
	l := acceptedRMLog(t, tenant, session, "hi", createdAt)
	l.Started("")
	return l
}

func (l *rmLog) id() string { return l.RunID() }

func (l *rmLog) add(d events.Draft) events.Envelope { return l.Add(d).Last() }

func (l *rmLog) raw(v any) json.RawMessage { return eventstest.Raw(v) }

// startTool starts a tool item.
func (l *rmLog) startTool(typ events.ItemType, name, args string) string {
	item := events.NewID("itm")
	l.ToolStarted(item, "", typ, events.ToolCallRef{ID: "call-" + item, Name: name, Arguments: args})
	return item
}

// tool runs a tool item to completion; exec is set for a command_execution.
func (l *rmLog) tool(typ events.ItemType, name, args, output string, exec *events.ExecData) string {
	item := l.startTool(typ, name, args)
	l.ToolCompleted(item, typ, events.ToolCallRef{ID: "call-" + item, Name: name, Arguments: args},
		events.ToolResultData{Output: output, Exec: exec})
	return item
}

// awaitApproval starts a shell item that waits for approval; the run pauses.
func (l *rmLog) awaitApproval(input string) string {
	c := events.ToolCallRef{Name: "shell", Arguments: input}
	item := l.startTool(events.ItemCommandExecution, c.Name, c.Arguments)
	l.Ask(item, c, "", "").Paused(events.PauseAwaitingApproval, item)
	return item
}

// decide is alice's decision on item, applied as admission applies it.
func (l *rmLog) decide(item, decision, scope string) {
	l.Decide(eventstest.Decision{CommandID: events.NewID("cmd"), ItemID: item, Decision: decision, Scope: scope,
		Actor: events.Actor{Type: "user", ID: "alice"}})
}
