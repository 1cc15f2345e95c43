package systemtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	pginfra "github.com/xbot-runtime/xbot/infra/postgres"
	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestViewsRebuiltFromTheLogEqualTheLiveViews runs a workload through the
// whole system with every projector, takes checksums of every Postgres read
// model and of ClickHouse's deduplicated audit rows, rebuilds both views from
// offset zero, and compares.
func TestViewsRebuiltFromTheLogEqualTheLiveViews(t *testing.T) {
	t.Parallel()
	agents := []profile.Profile{
		{ID: "worker", Model: profile.ModelScripted, Tools: []string{"shell", "write_file", "ask_user"},
			Limits: profile.Limits{ToolConcurrency: 1}, Script: []profile.Turn{
				{Text: "Working.", ToolCalls: []profile.ScriptedCall{{Name: "shell", Arguments: `{"command":"echo hi; exit 2"}`},
					{Name: "write_file", Arguments: `{"path":"a.txt","content":"x\n"}`}, {Name: "shell", Arguments: `{"command":`}}},
				{ToolCalls: call1("ask_user", `{"question":"Ship it?"}`)},
				{Text: "Shipped."},
			}},
		{ID: "chat", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "You said: {{input}}"}}},
	}
	e := newEnv(t).withAgents(agents...)
	comp := localCompute(t, t.TempDir())
	chcfg := chtest.NewDatabase(t)
	st := e.startWith("all", func(o *stack.Options) { o.Compute, o.ClickHouse = comp, &chcfg })

	// The workload: tool calls, a question answered, a follow-up, a cancel,
	// a rejection and a duplicate.
	w := runUntil(t, st, "worker", "build", "rb-w", "paused", 15*time.Second)
	input(t, st, w, "clarification", "yes", "rb-w-a")
	c := create(t, st, "chat", "hello", "rb-c").RunID
	create(t, st, "chat", "hello", "rb-c") // duplicate
	waitStatus(t, st, c, "completed", 15*time.Second)
	next := input(t, st, c, "follow_up", "again", "rb-c-f").CreatedRunID
	input(t, st, c, "steer", "late", "rb-c-s") // rejected
	for _, id := range []string{w, next} {
		waitStatus(t, st, id, "completed", 15*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for name, r := range st.Projectors {
		eventually.Succeeds(t, 20*time.Second, name+" caught up", func() error {
			lag, err := r.Lag(ctx)
			if err != nil || lag.Total() != 0 {
				return fmt.Errorf("lag %v (%w)", lag.Partitions, err)
			}
			return nil
		})
	}
	// The lag every view reports through the API is zero now.
	lags, err := apiOf(t, st).Projectors(ctx)
	if err != nil || len(lags) != 3 {
		t.Fatalf("projector lag: %+v %v", lags, err)
	}
	for _, p := range lags {
		if p.Lag != 0 {
			t.Errorf("projector %s lags %d after catching up", p.Name, p.Lag)
		}
	}
	livePG, err := st.Store.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, ch, err := stack.OpenClickHouse(ctx, chcfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	liveCH, err := ch.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Stop(ctx) // the projectors leave their groups: a rebuild may start

	store := postgresView(ctx, t, e.dsn, e.kcfg)
	for _, p := range []runner.Projector{store, ch} {
		eventually.Succeeds(t, 30*time.Second, "rebuild of "+p.Name(), func() error {
			return runner.Rebuild(ctx, runner.Config{Kafka: e.kcfg, Projector: p, Logger: zaptest.NewLogger(t)}, true, nil)
		})
	}
	rebuiltPG, err := store.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rebuiltCH, err := ch.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(livePG, rebuiltPG) {
		t.Errorf("postgres read models differ after the rebuild:\nlive    %v\nrebuilt %v", livePG, rebuiltPG)
	}
	if !maps.Equal(liveCH, rebuiltCH) {
		t.Errorf("clickhouse audit rows differ after the rebuild:\nlive    %v\nrebuilt %v", liveCH, rebuiltCH)
	}
	for table, sum := range liveCH {
		if sum.Rows == 0 {
			t.Errorf("clickhouse table %s is empty: the comparison proves nothing", table)
		}
	}
}

// TestPoisonRecordIsDeadLetteredAndOtherRunsFlow writes a run whose log has a
// seq gap straight to the events topic: the Postgres projector dead-letters
// the record with its reason and keeps projecting other runs.
func TestPoisonRecordIsDeadLetteredAndOtherRunsFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("all", nil)
	bad := "run_01J0000000000000000000BAD1"
	prod, err := kafka.NewProducer(e.kcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	id := events.Identity{RunID: bad, TenantID: tenant}
	for _, seq := range []int64{1, 3} { // seq 2 is missing
		env, err := events.Draft{Type: events.RunAccepted, CommandID: events.DerivedID("cmd", bad, fmt.Sprint(seq)),
			Payload: events.RunAcceptedPayload{AgentID: "demo", IdempotencyKey: fmt.Sprint("k", seq), Actor: events.Actor{Type: "user", ID: "u"}}}.
			Seal(id, seq, events.NewID("evt"), time.Now().UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(env)
		if err := prod.Produce(context.Background(), e.kcfg.WithDefaults().EventsTopic(), bad, raw); err != nil {
			t.Fatal(err)
		}
	}
	var dead []kafka.Record
	eventually.Succeeds(t, 15*time.Second, "the gap dead-lettered", func() error {
		dead = dead[:0]
		err := kafka.ReadTopic(context.Background(), e.kcfg, e.kcfg.WithDefaults().DeadLetterTopic(), func(r kafka.Record) error {
			if r.Headers[runner.HeaderProjector] == "postgres" {
				dead = append(dead, r)
			}
			return nil
		})
		if err != nil || len(dead) != 1 {
			return fmt.Errorf("%d dead letters (%w)", len(dead), err)
		}
		return nil
	})
	if h := dead[0].Headers; h[runner.HeaderRunID] != bad || h[runner.HeaderSeq] != "3" || h[runner.HeaderReason] == "" || dead[0].Key != bad {
		t.Errorf("dead letter key %q headers %v", dead[0].Key, h)
	}
	// The projector keeps serving other runs.
	runUntil(t, st, "demo", "still there?", "poison-after", "completed", 10*time.Second)

	// A rebuild from the beginning dead-letters the same record again and
	// ends with the same view.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := st.Projectors["postgres"]
	eventually.Succeeds(t, 20*time.Second, "postgres caught up", func() error {
		lag, err := r.Lag(ctx)
		if err != nil || lag.Total() != 0 {
			return fmt.Errorf("lag %v (%w)", lag.Partitions, err)
		}
		return nil
	})
	live, err := st.Store.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Stop(ctx)
	store := postgresView(ctx, t, e.dsn, e.kcfg)
	if err := runner.Rebuild(ctx, runner.Config{Kafka: e.kcfg, Projector: store, Logger: zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))}, true, nil); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := store.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(live, rebuilt) {
		t.Errorf("rebuilt view differs:\nlive    %v\nrebuilt %v", live, rebuilt)
	}
}

// postgresView is the Postgres projector over the database at dsn, reading
// the events topic of kcfg, as a rebuild runs it; its pool closes when t ends.
func postgresView(ctx context.Context, t testing.TB, dsn string, kcfg kafka.Config) *pgview.Store {
	t.Helper()
	pool, err := pginfra.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pgview.New(pool, zap.NewNop(), pgview.WithEventsTopic(kcfg.WithDefaults().EventsTopic()))
}
