package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/devstack/pgtest"
	"github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
)

// The runner benchmark reads from Kafka; the cluster starts only if it does.
func TestMain(m *testing.M) { os.Exit(pgtest.Run(kafkatest.Wrap(m))) }

const (
	projector = "pg-test"
	topic     = "xbot.events.v1"
)

// fixture is a Store over a fresh, migrated database of its own.
type fixture struct {
	store *postgres.Store
	pool  *pgxpool.Pool
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	store, pool := postgrestest.New(tb)
	return &fixture{store: store, pool: pool}
}

// storeWith returns a store on a pool of its own, configured as f's with
// change made (another role, other session settings).
func (f *fixture) storeWith(tb testing.TB, change func(*pgxpool.Config)) *postgres.Store {
	tb.Helper()
	return postgrestest.Reconfigured(tb, f.pool, change)
}

// apply applies recs and fails the test on error.
func (f *fixture) apply(tb testing.TB, recs []postgres.Record) {
	tb.Helper()
	if err := f.store.ApplyBatch(context.Background(), projector, topic, recs); err != nil {
		tb.Fatal(err)
	}
}

// command returns the commands row of id and fails the test if there is none.
func (f *fixture) command(tb testing.TB, tenant, id string) postgres.Command {
	tb.Helper()
	c, err := f.store.GetCommand(context.Background(), tenant, id)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// checksumTables returns a digest of every row of every table of the
// projection, so two states can be compared whole.
func (f *fixture) checksumTables(tb testing.TB) map[string]string {
	tb.Helper()
	tables := []string{"runs", "run_events", "run_seq", "commands", "items", "approvals", "sessions",
		"permission_grants", "projector_checkpoints", "projector_heartbeats"}
	out := make(map[string]string, len(tables))
	for _, table := range tables {
		out[table] = f.checksum(tb, "SELECT t::text FROM "+table+" t")
	}
	return out
}

// checksumViews is Store.Checksums with the checkpoints of every projector
// (these tests apply as projector, not ProjectorName), for comparing two
// databases.
func (f *fixture) checksumViews(tb testing.TB) map[string]string {
	tb.Helper()
	out, err := f.store.Checksums(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	out["projector_checkpoints"] = f.checksum(tb,
		"SELECT (projector, topic, partition, next_offset)::text FROM projector_checkpoints")
	return out
}

func (f *fixture) checksum(tb testing.TB, rowsSQL string) string {
	tb.Helper()
	var sum string
	err := f.pool.QueryRow(context.Background(),
		"SELECT count(*) || ':' || coalesce(md5(string_agg(r, '|' ORDER BY r)), '') FROM ("+rowsSQL+") AS s(r)").Scan(&sum)
	if err != nil {
		tb.Fatal(err)
	}
	return sum
}

// runLog is one run's log as the executor writes it (eventstest): events
// 7 ms apart from clock, in a run of a fresh id.
type runLog struct{ *eventstest.Log }

var clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMilli()

func newRun(tb testing.TB, tenant, session string) *runLog {
	id := events.Identity{RunID: events.NewID("run"), TenantID: tenant, PlatformSessionID: session}
	return &runLog{eventstest.New(tb, id, eventstest.Clock(clock, 7))}
}

// accept appends the run's acceptance by command cmdID with key.
func (l *runLog) accept(cmdID, key string) events.Envelope {
	return l.Accepted(cmdID, events.RunAcceptedPayload{
		AgentID: "assistant", Input: events.UserInput{Content: "write a haiku"},
		SandboxKey: events.SandboxKey{TenantID: l.Identity().TenantID, WorkspaceID: "ws-1", AgentID: "assistant", OwnerID: "u-1"},
		Metadata:   map[string]string{"channel": "web"}, IdempotencyKey: key, Actor: events.Actor{Type: "user", ID: "u-1"},
	}).Last()
}

// assistantMessage streams one assistant message item with n deltas.
func (l *runLog) assistantMessage(n int) {
	item := events.NewID("itm")
	l.ItemStarted(item, events.ItemAssistantMessage, nil)
	for i := range n {
		l.Deltas(item, fmt.Sprintf("line %d of an old silent pond, a frog jumps into the pond, splash! silence again. ", i))
	}
	l.ItemCompleted(item, events.ItemAssistantMessage, events.ItemStatusCompleted, "an old silent pond", nil)
}

// completedRun is accepted → started → an assistant message → completed.
func completedRun(tb testing.TB, tenant, session string) (*runLog, string) {
	return completedRunAt(tb, tenant, session, clock)
}

// completedRunAt is completedRun, accepted at Unix ms at.
func completedRunAt(tb testing.TB, tenant, session string, at int64) (*runLog, string) {
	l := newRun(tb, tenant, session)
	l.At(at)
	cmd := events.NewID("cmd")
	l.accept(cmd, "key-"+cmd)
	l.Started("exec-1")
	l.assistantMessage(2)
	l.Completed("an old silent pond")
	return l, cmd
}

// offsets hands out Kafka offsets per partition, leaving a hole after each
// batch as transaction markers do.
type offsets map[int32]int64

// records encodes evs as records of partition.
func (o offsets) records(tb testing.TB, partition int32, evs ...events.Envelope) []postgres.Record {
	tb.Helper()
	out := make([]postgres.Record, len(evs))
	for i, e := range evs {
		raw, err := json.Marshal(e)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = postgres.Record{Partition: partition, Offset: o[partition], Value: raw}
		o[partition]++
	}
	o[partition]++ // the commit marker
	return out
}

func wantNotFound(tb testing.TB, err error) {
	tb.Helper()
	if !errors.Is(err, postgres.ErrNotFound) {
		tb.Fatalf("error = %v, want ErrNotFound", err)
	}
}
