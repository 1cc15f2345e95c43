package api_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	infrapg "github.com/xbot-runtime/xbot/infra/postgres"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/stack"
)

// readModelEnv is an API over a real, migrated Postgres read model of its own.
type readModelEnv struct {
	*env
	store  *postgres.Store
	offset int64
}

func newReadModelEnv(t *testing.T) *readModelEnv {
	t.Helper()
	store := newPostgresStore(t)
	cfg := api.Config{Tokens: map[string]string{tokenA: tenantA, tokenB: tenantB}}
	a, err := api.New(cfg, stack.APIStore(store.Queries), &fakeSender{}, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return &readModelEnv{env: &env{srv: srv}, store: store}
}

// project applies the logs, interleaved, as one batch.
func (e *readModelEnv) project(t *testing.T, logs ...*rmLog) {
	t.Helper()
	var recs []postgres.Record
	for i := 0; ; i++ {
		added := false
		for _, l := range logs {
			if i < len(l.evs) {
				raw, err := json.Marshal(l.evs[i])
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, postgres.Record{Partition: 0, Offset: e.offset, Value: raw})
				e.offset++
				added = true
			}
		}
		if !added {
			break
		}
	}
	for _, l := range logs {
		l.evs = nil // projected
	}
	if err := e.store.ApplyBatch(context.Background(), postgres.ProjectorName, "xbot.events.v1", recs); err != nil {
		t.Fatal(err)
	}
}

// rmLog builds a legal run log: each event is sealed and folded.
type rmLog struct {
	t     *testing.T
	ident events.Identity
	state events.RunState
	now   int64
	evs   []events.Envelope
}

// newRMLog starts a run (accepted, started) of tenant in session at
// createdAt (Unix ms).
func newRMLog(t *testing.T, tenant, session string, createdAt int64) *rmLog {
	l := &rmLog{t: t, now: createdAt,
		ident: events.Identity{RunID: events.NewID("run"), TenantID: tenant, PlatformSessionID: session}}
	l.add(events.Draft{Type: events.RunAccepted, CommandID: events.NewID("cmd"), Payload: events.RunAcceptedPayload{
		AgentID: "coder", Input: events.UserInput{Content: "hi"}, IdempotencyKey: "k-" + l.ident.RunID,
		SandboxKey: events.SandboxKey{TenantID: tenant, WorkspaceID: "default", AgentID: "coder", OwnerID: "u"}}})
	l.add(events.Draft{Type: events.RunStarted})
	return l
}

func (l *rmLog) id() string { return l.ident.RunID }

func (l *rmLog) add(d events.Draft) events.Envelope {
	l.t.Helper()
	e, err := d.Seal(l.ident, l.state.LastSeq+1, events.NewID("evt"), l.now)
	if err != nil {
		l.t.Fatal(err)
	}
	if l.state, err = events.Fold(l.state, e); err != nil {
		l.t.Fatalf("illegal test log: %v", err)
	}
	l.now += 10
	l.evs = append(l.evs, e)
	return e
}

func (l *rmLog) raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		l.t.Fatal(err)
	}
	return b
}

// startTool starts a tool item.
func (l *rmLog) startTool(typ events.ItemType, name, args string) string {
	item := events.NewID("itm")
	l.add(events.Draft{Type: events.ItemStarted, ItemID: item, Payload: events.ItemStartedPayload{ItemType: typ,
		Data: l.raw(events.ToolCallData{ToolCallID: "call-" + item, ToolName: name, Arguments: args})}})
	return item
}

// tool runs a tool item to completion; exec is set for a command_execution.
func (l *rmLog) tool(typ events.ItemType, name, args, output string, exec *events.ExecData) string {
	item := l.startTool(typ, name, args)
	l.add(events.Draft{Type: events.ItemCompleted, ItemID: item, Payload: events.ItemCompletedPayload{
		ItemType: typ, Status: events.ItemStatusCompleted, Content: output,
		Data: l.raw(events.ToolResultData{ToolName: name, Output: output, Exec: exec})}})
	return item
}

// awaitApproval starts a shell item that waits for approval; the run pauses.
func (l *rmLog) awaitApproval(input string) string {
	item := l.startTool(events.ItemCommandExecution, "shell", input)
	l.add(events.Draft{Type: events.ItemAwaitingApproval, ItemID: item, Payload: events.ItemAwaitingApprovalPayload{
		ItemType: events.ItemCommandExecution, ToolName: "shell", Input: json.RawMessage(input)}})
	l.add(events.Draft{Type: events.RunPaused, Payload: events.RunPausedPayload{PauseReason: events.PauseAwaitingApproval}})
	return item
}

// decide decides item and resumes the run.
func (l *rmLog) decide(item, decision, scope string) {
	l.add(events.Draft{Type: events.ApprovalDecisionSubmitted, ItemID: item, CommandID: events.NewID("cmd"),
		Payload: events.ApprovalDecisionPayload{Decision: decision, Scope: scope, Actor: events.Actor{Type: "user", ID: "alice"}}})
	l.add(events.Draft{Type: events.RunResumed})
}

// newPostgresStore is the read models on a fresh, migrated database of the
// shared test server, closed when the test ends.
func newPostgresStore(t *testing.T) *postgres.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := infrapg.Connect(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := infrapg.Migrate(ctx, pool, postgres.Component, postgres.Migrations); err != nil {
		t.Fatal(err)
	}
	store := postgres.New(pool, zaptest.NewLogger(t))
	t.Cleanup(store.Close)
	return store
}
