package systemtest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/executor"
	"github.com/xbot-runtime/xbot/services/stack"
)

// attacker produces records straight to the commands topic with its own
// partitioner, as anyone who reaches the broker can.
type attacker struct {
	t  *testing.T
	cl *kgo.Client
	e  *env
}

func newAttacker(t *testing.T, e *env) *attacker {
	t.Helper()
	cl, err := kafka.NewClient(e.kcfg, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return &attacker{t: t, cl: cl, e: e}
}

func (a *attacker) produce(p int32, key string, value []byte, headers map[string]string) {
	a.t.Helper()
	rec := &kgo.Record{Topic: a.e.kcfg.WithDefaults().CommandsTopic(), Partition: p, Key: []byte(key), Value: value}
	for k, v := range headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		a.t.Fatal(err)
	}
}

// forgedCommand is a well-formed command of tenant for runID.
func forgedCommand(t *testing.T, typ commands.Type, tenant, runID string, payload any) []byte {
	t.Helper()
	c, err := commands.New(typ, commands.Header{RunID: runID, TenantID: tenant, PlatformSessionID: "sess-forged",
		Actor: events.Actor{Type: "user", ID: "mallory"}}, payload)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(c)
	return raw
}

// commandRecord returns the command record keyed key, with its headers.
func commandRecord(t *testing.T, e *env, key string) kafka.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var found kafka.Record
	if err := kafka.ReadTopic(ctx, e.kcfg, e.kcfg.WithDefaults().CommandsTopic(), func(r kafka.Record) error {
		if r.Key == key {
			found = r
		}
		return nil
	}); err != nil || found.Value == nil {
		t.Fatalf("command record of %s: %v", key, err)
	}
	return found
}

// executorLetters counts the executor's dead letters by reason.
func executorLetters(ctx context.Context, e *env) (map[string]int, error) {
	out := map[string]int{}
	err := kafka.ReadTopic(ctx, e.kcfg, e.kcfg.WithDefaults().DeadLetterTopic(), func(r kafka.Record) error {
		if r.Headers[executor.HeaderSource] == "executor" {
			out[r.Headers[executor.HeaderDeadLetterReason]]++
		}
		return nil
	})
	return out, err
}

// auditRows returns the run's audit_events rows (seq, event id, type).
func auditRows(t *testing.T, st *stack.Stack, chcfg chinfra.Config, runID string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	eventually.Succeeds(t, 20*time.Second, "the clickhouse projector caught up", func() error {
		lag, err := st.Projectors["clickhouse"].Lag(ctx)
		if err != nil || lag.Total() != 0 {
			return fmt.Errorf("lag %v (%w)", lag.Partitions, err)
		}
		return nil
	})
	conn, err := chinfra.Connect(ctx, chcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	rows, err := conn.Query(ctx, "SELECT seq, event_id, type FROM audit_events FINAL WHERE run_id = ? ORDER BY seq", runID)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var seq uint64
		var id, typ string
		if err := rows.Scan(&seq, &id, &typ); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s %s", seq, id, typ))
	}
	return out
}

// TestForgedCommandRecordsChangeNothing: an attacker with broker access
// replays the API's signed CreateRun of a finished run onto another
// partition, and produces an unsigned CreateRun with pre-approved grants, an
// unsigned approval for another tenant's run, a record signed with a made-up
// MAC and junk. Each lands in the dead-letter topic with its reason; no run
// gains an event, the real run and its audit rows are unchanged, and the
// executor goes on admitting signed commands.
func TestForgedCommandRecordsChangeNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	chcfg := chtest.NewDatabase(t)
	st := e.startWith("all", func(o *stack.Options) { o.ClickHouse = &chcfg })
	genuine := runUntil(t, st, "demo", "hello", "forged-genuine", "completed", 15*time.Second)
	before, audit := len(listEvents(t, st, genuine)), auditRows(t, st, chcfg, genuine)

	mallory := newAttacker(t, e)
	n := int(e.kcfg.Partitions)
	home := partition.For(genuine, n)
	signed := commandRecord(t, e, genuine)
	mallory.produce((home+1)%int32(n), genuine, signed.Value, signed.Headers)
	sk := events.SandboxKey{TenantID: tenant, WorkspaceID: "default", AgentID: "demo", OwnerID: tenant}
	forgedRun := commands.RunIDFor(tenant, "forged-grants", sk, n)
	grants := []events.PermissionGrant{{GrantID: events.NewID("grt"), Scope: "platform_session", ToolName: "shell", RuleID: "any",
		Actor: events.Actor{Type: "user", ID: "mallory"}}}
	mallory.produce(partition.For(forgedRun, n), forgedRun, forgedCommand(t, commands.CreateRun, tenant, forgedRun,
		commands.CreateRunPayload{AgentID: "demo", Input: events.UserInput{Content: "rm -rf /"}, SandboxKey: sk, SessionGrants: grants}), nil)
	approval := forgedCommand(t, commands.SubmitApprovalDecision, "other", genuine,
		commands.SubmitApprovalDecisionPayload{ItemID: events.NewID("itm"), Decision: "allow", Scope: "platform_session"})
	mallory.produce(home, genuine, approval, nil)
	mallory.produce(home, genuine, approval, map[string]string{commands.HeaderKeyID: st.CommandKeys().Current().ID,
		commands.HeaderMAC: base64.RawURLEncoding.EncodeToString(make([]byte, 32))})
	mallory.produce(home, genuine, []byte("\x00not a command"), nil)

	runUntil(t, st, "demo", "still admitted", "forged-after", "completed", 15*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	eventually.Succeeds(t, 20*time.Second, "every forged record dead-lettered", func() error {
		got, err := executorLetters(ctx, e)
		if err != nil || got[executor.ReasonMisrouted] != 1 || got[executor.ReasonUnauthenticated] != 4 {
			return fmt.Errorf("dead letters by reason %v (%w)", got, err)
		}
		return nil
	})
	if got := len(listEvents(t, st, genuine)); got != before {
		t.Errorf("the real run has %d events after the forgeries, want %d", got, before)
	}
	if run, err := apiOf(t, st).GetRun(t.Context(), forgedRun); !isProblem(err, 404, "run_not_found") {
		t.Errorf("the forged CreateRun made run %s: %+v %v", forgedRun, run, err)
	}
	if _, err := apiClient(t, st, otherToken, nil).CancelRun(t.Context(), genuine, "", client.CommandOptions{}); !isProblem(err, 404, "run_not_found") {
		t.Errorf("another tenant's cancel of the run: %v, want 404 run_not_found", err)
	}
	e.invariants(st) // also: every event on its run's partition
	if err := contracttests.CommandsAccounted(ctx, e.kcfg); err != nil {
		t.Error(err)
	}
	if got := auditRows(t, st, chcfg, genuine); fmt.Sprint(got) != fmt.Sprint(audit) {
		t.Errorf("audit rows of the real run changed:\nbefore %v\nafter  %v", audit, got)
	}
}

// TestIdempotencyKeyReusedForAnotherBodyIs422: the same Idempotency-Key with
// the same body is a duplicate of the first run; with another body it is
// refused 422 idempotency_key_reused, and the run keeps the first body.
func TestIdempotencyKeyReusedForAnotherBodyIs422(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.start("all", nil)
	runID := create(t, st, "demo", "the first body", "reused-key").RunID
	if again := create(t, st, "demo", "the first body", "reused-key"); again.Outcome != client.OutcomeDuplicate || again.RunID != runID {
		t.Fatalf("retry with the same body: %+v", again)
	}
	api, reused := apiOf(t, st), string(events.CodeIdempotencyKeyReused)
	if _, err := api.CreateRun(t.Context(), client.CreateRunRequest{AgentID: "demo", Input: client.UserInput{Content: "another body"}},
		client.CommandOptions{IdempotencyKey: "reused-key"}); !isProblem(err, 422, reused) {
		t.Fatalf("same key, another body: %v, want 422 %s", err, reused)
	}
	if run := waitStatus(t, st, runID, "completed", 15*time.Second); run.Input.Content != "the first body" {
		t.Errorf("the run's input is %+v, want the first body", run.Input)
	}
	if res := cancelRun(t, st, runID, "done", "reused-cancel"); res.Outcome != client.OutcomeNoEffect {
		t.Fatalf("cancel: %+v", res)
	}
	if _, err := api.CancelRun(t.Context(), runID, "another reason", client.CommandOptions{IdempotencyKey: "reused-cancel"}); !isProblem(err, 422, reused) {
		t.Errorf("cancel under a used key with another reason: %v, want 422 %s", err, reused)
	}
	e.invariants(st)
}
