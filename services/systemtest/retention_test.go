package systemtest_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/executor"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The retention test: the oldest records of the events topic are deleted,
// as a time retention deletes a partition's oldest segments, up to an
// offset before every live run, and a new executor takes the partitions
// over. Each partition plays one part:
const (
	// retCancelled holds an old run that was also cancelled after it
	// completed (no_effect: two commands in its state, both deleted), then
	// the live runs of one sandbox key: two paused on their questions
	// (the first yielded the key to the second).
	retCancelled int32 = iota
	// retStraddling holds an old run whose creation is deleted but whose
	// later command (a cancel, no_effect) lies after the cut.
	retStraddling
	// retApproval holds an old run, then a live run awaiting approval.
	retApproval
	// retEmptied holds only an old run: nothing is left of the partition.
	// The old run gets a follow-up.
	retEmptied
	retPartitions
)

// retOutcomeWait bounds the wait for one command's outcome: far above the
// second an outcome takes on a loaded 2-core machine, short enough that an
// executor that never answers fails the test in minutes, not hours.
const retOutcomeWait = 15 * time.Second

// retentionChat answers at once.
var retentionChat = profile.Profile{ID: "chat", Model: profile.ModelScripted,
	Script: []profile.Turn{{Text: "You said: {{input}}"}}}

// retention is the test's system: the API and the Postgres projector in one
// stack, executors started (and killed) apart, and the runs it made.
type retention struct {
	t     *testing.T
	e     *env
	front *stack.Stack
	api   *client.Client
	comp  *local.Provider
	reqs  *requests
	count string   // one line per deploy the approval run's tool made
	old   []oldRun // one per partition, at its index
	// cutAt is, per partition, the offset below which the events are deleted.
	cutAt map[int32]int64
	// The live runs: paused on a question, a second run of its sandbox key
	// (started when the first paused: it yielded the key) paused on its own,
	// and one awaiting approval.
	asker, second, approval string
}

// oldRun is a run that ended before the cut, with the answers it got then.
type oldRun struct {
	id        string
	req       client.CreateRunRequest
	key       string
	created   client.CommandResult
	cancelKey string               // "" when it got no cancel
	cancelled client.CommandResult // the cancel's answer: no_effect
}

func newRetention(t *testing.T) *retention {
	t.Helper()
	count := filepath.Join(t.TempDir(), "count")
	e := newEnv(t).withAgents(retentionChat, askerAgent, deployer("ops", count, "deploy"))
	if e.kcfg.Partitions < retPartitions {
		t.Fatalf("the test needs %d partitions, the env has %d", retPartitions, e.kcfg.Partitions)
	}
	front := e.start("front", nil, stack.API, stack.ProjectorPostgres)
	return &retention{t: t, e: e, front: front, api: apiOf(t, front), comp: localCompute(t, t.TempDir()),
		reqs: &requests{got: map[string][]model.Request{}}, count: count}
}

// executor starts an executor; core (nil: none) also gets its log.
func (r *retention) executor(name string, core zapcore.Core) *stack.Stack {
	r.t.Helper()
	return r.e.startWith(name, func(o *stack.Options) {
		o.Components, o.Compute, o.Models = []stack.Component{stack.Executor}, r.comp, r.reqs.resolver
		if core != nil {
			o.Logger = zap.New(zapcore.NewTee(o.Logger.Core(), core)).Named(name)
		}
	})
}

// TestRetentionDeletedPrefixQuarantinesNothing deletes the records of every
// partition of the events topic below an offset after the last event of the
// old runs and before the first of every live run, with the executor down.
// A new executor must take over, answer commands on the old runs exactly as
// before (a retried create is a duplicate of the original, a cancel has no
// effect, a steer is invalid_state), carry the live runs on (a clarification
// resumes each paused run of one sandbox key, which started in turn as the
// one before paused, an approval lets the waiting run finish), quarantine nothing and dead-letter nothing.
// A follow-up of an old run must either give the next run the old run's
// conversation or fail it with a code that names the cause.
func TestRetentionDeletedPrefixQuarantinesNothing(t *testing.T) {
	t.Parallel()
	r := newRetention(t)
	exA := r.executor("exA", nil)
	r.createOld()
	r.cutAt = r.cut()
	r.cancelOld(retStraddling)
	r.createLive()
	exA.Executor.Kill()
	r.checkCut()
	r.deleteBelow()

	core, logs := observer.New(zapcore.DebugLevel)
	exB := r.executor("exB", core)
	eventually.Succeeds(t, 30*time.Second, "exB owns every partition", func() error {
		if got := exB.Executor.Partitions(); len(got) != int(r.e.kcfg.Partitions) {
			return fmt.Errorf("exB owns %v", got)
		}
		return nil
	})
	r.noQuarantine(logs)
	r.oldAnswered()
	r.liveGoOn()
	r.followUp()
	r.noQuarantine(logs)
	r.clean()
}

// workspaceOn is a workspace whose sandbox key of agent (acme's own) lives
// on partition p.
func (r *retention) workspaceOn(agent string, p int32) string {
	r.t.Helper()
	for i := range 1000 {
		ws := fmt.Sprintf("ret-%s-%d", agent, i)
		sk := events.SandboxKey{TenantID: tenant, WorkspaceID: ws, AgentID: agent, OwnerID: tenant}
		if commands.SandboxPartition(sk, int(r.e.kcfg.Partitions)) == p {
			return ws
		}
	}
	r.t.Fatalf("no workspace of %s on partition %d", agent, p)
	return ""
}

// createOn creates a run of agent on partition p and returns the answer.
func (r *retention) createOn(p int32, agent, content, key string) (client.CreateRunRequest, client.CommandResult) {
	r.t.Helper()
	req := client.CreateRunRequest{AgentID: agent, Input: client.UserInput{Content: content},
		SandboxKey: &client.SandboxKeyRequest{WorkspaceID: r.workspaceOn(agent, p)}}
	res := r.settled(createRun(r.t, r.api, req, key))
	if got := partition.For(res.RunID, int(r.e.kcfg.Partitions)); got != p || res.Outcome != client.OutcomeAccepted {
		r.t.Fatalf("create %s: %+v on partition %d, want accepted on %d", key, res, got, p)
	}
	return req, res
}

// createOld completes one old run per partition and cancels one of them.
func (r *retention) createOld() {
	r.t.Helper()
	for p := range int32(r.e.kcfg.Partitions) {
		o := oldRun{key: fmt.Sprintf("ret-old-%d", p)}
		o.req, o.created = r.createOn(p, "chat", fmt.Sprintf("old question %d", p), o.key)
		o.id = o.created.RunID
		r.old = append(r.old, o)
	}
	for _, o := range r.old {
		waitStatus(r.t, r.front, o.id, "completed", 20*time.Second)
	}
	r.cancelOld(retCancelled)
}

// cancelOld cancels the ended old run on partition p: no effect.
func (r *retention) cancelOld(p int32) {
	r.t.Helper()
	o := &r.old[p]
	o.cancelKey = o.key + "-cancel"
	o.cancelled = r.settled(cancelRun(r.t, r.front, o.id, "too late", o.cancelKey))
	if o.cancelled.Outcome != client.OutcomeNoEffect {
		r.t.Fatalf("cancel of the completed run %s: %+v, want no_effect", o.id, o.cancelled)
	}
}

// cut is where the records to delete end: the end of every partition once
// the old runs are done and the Postgres projector has applied them all.
func (r *retention) cut() map[int32]int64 {
	r.t.Helper()
	r.projected()
	start, end, err := kafka.EndOffsets(r.t.Context(), r.e.kcfg, r.e.kcfg.WithDefaults().EventsTopic())
	if err != nil {
		r.t.Fatal(err)
	}
	for p, o := range end {
		if o <= start[p] {
			r.t.Fatalf("partition %d holds no old event (offsets %d to %d)", p, start[p], o)
		}
	}
	return end
}

// projected waits until the Postgres projector has applied every committed
// event.
func (r *retention) projected() {
	r.t.Helper()
	group := runner.Group(r.e.kcfg, "postgres")
	eventually.Succeeds(r.t, 20*time.Second, "the postgres projector caught up", func() error {
		lag, err := kafka.GroupLag(r.t.Context(), r.e.kcfg, group, r.e.kcfg.WithDefaults().EventsTopic())
		for p, l := range lag {
			if err == nil && l > 0 {
				err = fmt.Errorf("partition %d lags %d", p, l)
			}
		}
		return err
	})
}

// createLive starts the live runs after the old ones: a run paused on a
// question, a second run of its sandbox key, which starts since the paused
// run yields the key and pauses on its question too, and a run awaiting
// approval.
func (r *retention) createLive() {
	r.t.Helper()
	_, asker := r.createOn(retCancelled, "asker", "paint the door", "ret-live-asker")
	r.asker = asker.RunID
	if run := waitStatus(r.t, r.front, r.asker, "paused", 20*time.Second); run.PauseReason != string(events.PauseAwaitingUserInput) {
		r.t.Fatalf("asker paused %q", run.PauseReason)
	}
	_, second := r.createOn(retCancelled, "asker", "paint the gate", "ret-live-queued")
	r.second = second.RunID
	if run := waitStatus(r.t, r.front, r.second, "paused", 20*time.Second); run.PauseReason != string(events.PauseAwaitingUserInput) {
		r.t.Fatalf("the second run of the key paused %q", run.PauseReason)
	}
	_, approval := r.createOn(retApproval, "ops", "ship it", "ret-live-approval")
	r.approval = approval.RunID
	if run := waitStatus(r.t, r.front, r.approval, "paused", 20*time.Second); run.PauseReason != string(events.PauseAwaitingApproval) {
		r.t.Fatalf("approval run paused %q", run.PauseReason)
	}
	pendingApprovals(r.t, r.front, r.approval, 1)
}

// isOld reports whether runID is one of the old runs.
func (r *retention) isOld(runID string) bool {
	return slices.ContainsFunc(r.old, func(o oldRun) bool { return o.id == runID })
}

// checkCut checks that every record below the cut is an old run's, that
// every live run and the straddling old run have records above it, and
// that nothing of the emptied partition's old run is.
func (r *retention) checkCut() {
	r.t.Helper()
	cut := r.cutAt
	above := map[string]int{}
	err := kafka.ReadTopic(r.t.Context(), r.e.kcfg, r.e.kcfg.WithDefaults().EventsTopic(), func(rec kafka.Record) error {
		switch {
		case rec.Offset >= cut[rec.Partition]:
			above[rec.Key]++
		case !r.isOld(rec.Key):
			return fmt.Errorf("partition %d offset %d, below the cut at %d, is of run %s, not an old run",
				rec.Partition, rec.Offset, cut[rec.Partition], rec.Key)
		}
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
	for _, id := range []string{r.asker, r.second, r.approval, r.old[retStraddling].id} {
		if above[id] == 0 {
			r.t.Fatalf("run %s has no event above the cut %v", id, cut)
		}
	}
	if n := above[r.old[retEmptied].id]; n != 0 {
		r.t.Fatalf("the emptied partition's old run has %d events above the cut", n)
	}
}

// deleteBelow deletes every record of the events topic below the cut and
// checks that each partition now starts there.
func (r *retention) deleteBelow() {
	r.t.Helper()
	cut := r.cutAt
	cl, err := kafka.NewClient(r.e.kcfg)
	if err != nil {
		r.t.Fatal(err)
	}
	defer cl.Close()
	adm, topic := kadm.NewClient(cl), r.e.kcfg.WithDefaults().EventsTopic()
	var offs kadm.Offsets
	for p, o := range cut {
		offs.AddOffset(topic, p, o, -1)
	}
	deleted, err := adm.DeleteRecords(r.t.Context(), offs)
	if err = errors.Join(err, deleted.Error()); err != nil {
		r.t.Fatalf("delete records of %s: %v", topic, err)
	}
	starts, err := adm.ListStartOffsets(r.t.Context(), topic)
	if err = errors.Join(err, starts.Error()); err != nil {
		r.t.Fatal(err)
	}
	for p, o := range cut {
		if got, ok := starts.Lookup(topic, p); !ok || got.Offset != o {
			r.t.Fatalf("partition %d starts at %+v after the delete, want %d", p, got, o)
		}
	}
}

// settled is res once its outcome is known: the API's answer, or, when the
// API's wait ran out, the command as GET /v1/commands/{commandId} reads it.
// An outcome not known within retOutcomeWait is an error of the test.
func (r *retention) settled(res client.CommandResult) client.CommandResult {
	r.t.Helper()
	if res.Outcome != client.OutcomePending {
		return res
	}
	err := eventually.Wait(retOutcomeWait, func() error {
		cmd, err := r.api.GetCommand(r.t.Context(), res.CommandID)
		if err != nil {
			return err
		}
		outcome := cmp.Or(cmd.FirstOutcome, cmd.Outcome)
		if outcome == "" || outcome == client.OutcomePending {
			return fmt.Errorf("outcome %q", outcome)
		}
		res.Outcome, res.Code, res.Detail, res.CreatedRunID = outcome, cmd.Code, cmd.Message, cmd.CreatedRunID
		if outcome == client.OutcomeDuplicate && cmd.OriginalCommandID != "" {
			res.CommandID, res.OriginalCommandID, res.DuplicateCommandID = cmd.OriginalCommandID, cmd.OriginalCommandID, res.CommandID
			res.OriginalOutcome, res.OriginalCode = cmd.OriginalOutcome, cmd.OriginalCode
		}
		return nil
	})
	if err != nil {
		r.t.Errorf("command %s on run %s has no outcome within %s: %v", res.CommandID, res.RunID, retOutcomeWait, err)
	}
	return res
}

// noQuarantine fails the test for every entry the new executor logged since
// the last call that reports a run quarantined.
func (r *retention) noQuarantine(logs *observer.ObservedLogs) {
	r.t.Helper()
	for _, e := range logs.TakeAll() {
		text := e.Message
		for k, v := range e.ContextMap() {
			text += fmt.Sprintf(" %s=%v", k, v)
		}
		if !strings.Contains(strings.ToLower(text), "quarantin") {
			continue
		}
		r.t.Errorf("the new executor quarantined a run: %s %v", e.Message, e.ContextMap())
	}
}

// oldAnswered sends commands on every old run and checks each is answered
// as before the delete.
func (r *retention) oldAnswered() {
	r.t.Helper()
	for _, o := range r.old {
		again := r.settled(createRun(r.t, r.api, o.req, o.key))
		if again.Outcome != client.OutcomeDuplicate || again.OriginalOutcome != client.OutcomeAccepted ||
			again.CommandID != o.created.CommandID {
			r.t.Errorf("retried create of old run %s: %+v, want a duplicate of %s (accepted)", o.id, again, o.created.CommandID)
		}
		if o.cancelKey != "" {
			res := r.settled(cancelRun(r.t, r.front, o.id, "too late", o.cancelKey))
			if res.Outcome != client.OutcomeDuplicate || res.OriginalOutcome != client.OutcomeNoEffect ||
				res.CommandID != o.cancelled.CommandID {
				r.t.Errorf("retried cancel of old run %s: %+v, want a duplicate of %s (no_effect)", o.id, res, o.cancelled.CommandID)
			}
		}
		if res := r.settled(cancelRun(r.t, r.front, o.id, "later still", o.key+"-cancel-2")); res.Outcome != client.OutcomeNoEffect {
			r.t.Errorf("cancel of old run %s: %+v, want no_effect", o.id, res)
		}
		res := r.settled(input(r.t, r.front, o.id, "steer", "faster", o.key+"-steer"))
		if res.Outcome != client.OutcomeRejected || res.Code != string(events.CodeInvalidState) {
			r.t.Errorf("steer of old run %s: %+v, want rejected invalid_state", o.id, res)
		}
	}
}

// liveGoOn answers the paused runs of the sandbox key, which complete one
// after the other, and approves the waiting run, which completes.
func (r *retention) liveGoOn() {
	r.t.Helper()
	for _, id := range []string{r.asker, r.second} {
		waitStatus(r.t, r.front, id, "paused", 20*time.Second)
		if res := r.settled(input(r.t, r.front, id, "clarification", "blue", "ret-answer-"+id)); res.Outcome != client.OutcomeAccepted {
			r.t.Errorf("clarification of live run %s: %+v, want accepted", id, res)
		}
		waitStatus(r.t, r.front, id, "completed", 20*time.Second)
	}
	if first, next := spanOf(r.t, r.front, r.asker), spanOf(r.t, r.front, r.second); next.start > first.end {
		r.t.Errorf("the second run started at %d, after the first ended at %d: the paused run did not yield its key", next.start, first.end)
	}
	items := pendingApprovals(r.t, r.front, r.approval, 1)
	if res := r.settled(decide(r.t, r.front, r.approval, items[0], "allow", "item", "ret-live-approval-d")); res.Outcome != client.OutcomeApplied {
		r.t.Errorf("approval of live run %s: %+v, want applied", r.approval, res)
	}
	waitStatus(r.t, r.front, r.approval, "completed", 20*time.Second)
	if got := lines(r.t, r.count); !slices.Equal(got, []string{"deploy"}) {
		r.t.Errorf("the approved tool ran %v, want once", got)
	}
}

// retFollowUp is the follow-up of the emptied partition's old run.
const retFollowUp = "and what did I ask before?"

// followUp follows up the old run of the emptied partition, whose events
// are all deleted. The follow-up is applied and names the session's next
// run. That run either completes, its model call holding the old run's
// question and answer before the follow-up, or fails with a code that names
// the cause (any but internal) and a message. In no case is the model sent
// the follow-up without the conversation before it.
func (r *retention) followUp() {
	r.t.Helper()
	parent := r.old[retEmptied]
	res := r.settled(input(r.t, r.front, parent.id, "follow_up", retFollowUp, "ret-follow-up"))
	if res.Outcome != client.OutcomeApplied || res.CreatedRunID == "" {
		r.t.Errorf("follow-up of old run %s: %+v, want applied, naming the next run", parent.id, res)
		return
	}
	run := r.waitEnded(res.CreatedRunID)
	calls := r.followUpCalls(parent)
	switch run.Status {
	case string(events.StatusCompleted):
		if calls == 0 {
			r.t.Errorf("the follow-up run %s completed without a model call", run.RunID)
		}
	case string(events.StatusFailed):
		failed := payloads[events.RunFailedPayload](r.t, r.front, run.RunID)
		if len(failed) != 1 || failed[0].ErrorCode == "" || failed[0].ErrorCode == events.FailInternal || failed[0].Message == "" {
			r.t.Errorf("the follow-up run %s failed with %+v, want a code naming the cause and a message", run.RunID, failed)
		}
	default:
		r.t.Errorf("the follow-up run %s ended %s, want completed with its context or failed with a clear code", run.RunID, run.Status)
	}
}

// waitEnded waits until run runID has ended and returns it.
func (r *retention) waitEnded(runID string) client.Run {
	r.t.Helper()
	var run client.Run
	eventually.Succeeds(r.t, 30*time.Second, "run "+runID+" ended", func() error {
		var err error
		if run, err = r.api.GetRun(r.t.Context(), runID); err == nil && !events.Status(run.Status).Terminal() {
			err = fmt.Errorf("status %s", run.Status)
		}
		return err
	})
	return run
}

// followUpCalls counts the model calls that carried the follow-up and fails
// the test for each that did not carry, before it, parent's question (from
// the user, or in a system summary) and parent's answer.
func (r *retention) followUpCalls(parent oldRun) int {
	r.t.Helper()
	question := parent.req.Input.Content
	n := 0
	for _, req := range r.reqs.of("chat") {
		i := slices.IndexFunc(req.Messages, func(m model.Message) bool {
			return m.Role == model.RoleUser && m.Content == retFollowUp
		})
		if i < 0 {
			continue
		}
		n++
		before := req.Messages[:i]
		asked := slices.ContainsFunc(before, func(m model.Message) bool {
			return m.Role != model.RoleAssistant && strings.Contains(m.Content, question)
		})
		answered := slices.ContainsFunc(before, func(m model.Message) bool { return strings.Contains(m.Content, "You said: "+question) })
		if !asked || !answered {
			r.t.Errorf("the model got the follow-up without the old run's conversation (asked %t, answered %t): %+v", asked, answered, req.Messages)
		}
	}
	return n
}

// clean checks what the whole story left: no dead letter; the old runs
// neither started again nor changed after the delete, only commands were
// answered on them; the log invariant on Postgres (which holds every event)
// and on Kafka for the runs created after the cut.
func (r *retention) clean() {
	r.t.Helper()
	r.projected()
	r.noDeadLetters()
	r.oldUnchanged()
	ctx, cancel := context.WithTimeout(r.t.Context(), 20*time.Second)
	defer cancel()
	contracttests.LogInvariant(ctx, r.t, contracttests.PostgresSource(r.front.Pool))
	contracttests.LogInvariant(ctx, r.t, r.newRuns(contracttests.KafkaSource(r.e.kcfg)))
}

// newRuns is src without the old runs, whose first events are deleted.
func (r *retention) newRuns(src contracttests.Source) contracttests.Source {
	return func(ctx context.Context) ([]events.Envelope, error) {
		evs, err := src(ctx)
		return slices.DeleteFunc(evs, func(e events.Envelope) bool { return r.isOld(e.RunID) }), err
	}
}

// noDeadLetters fails the test for every record of the dead-letter topic.
func (r *retention) noDeadLetters() {
	r.t.Helper()
	err := kafka.ReadTopic(r.t.Context(), r.e.kcfg, r.e.kcfg.WithDefaults().DeadLetterTopic(), func(rec kafka.Record) error {
		r.t.Errorf("dead letter of run %s: source %q, reasons %q %q", rec.Key, rec.Headers[executor.HeaderSource],
			rec.Headers[executor.HeaderDeadLetterReason], rec.Headers[runner.HeaderReason])
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// oldUnchanged checks that the old runs were accepted, started and ended
// once (Postgres holds their whole logs), and that every event of theirs
// above the cut answers a command without changing the run.
func (r *retention) oldUnchanged() {
	r.t.Helper()
	for _, o := range r.old {
		c := typeCounts(listEvents(r.t, r.front, o.id))
		if c[events.RunAccepted] != 1 || c[events.RunStarted] != 1 || c[events.RunCompleted] != 1 {
			r.t.Errorf("old run %s: lifecycle events %v, want each once", o.id, c)
		}
	}
	answers := []events.Type{events.CommandRejected, events.CommandNoEffect, events.CommandDuplicate, events.CommandApplied}
	err := kafka.ReadTopic(r.t.Context(), r.e.kcfg, r.e.kcfg.WithDefaults().EventsTopic(), func(rec kafka.Record) error {
		env, err := events.Decode(rec.Value)
		if err == nil && rec.Offset >= r.cutAt[rec.Partition] && r.isOld(env.RunID) && !slices.Contains(answers, env.Type) {
			r.t.Errorf("old run %s got %s (seq %d) above the cut", env.RunID, env.Type, env.Seq)
		}
		return err
	})
	if err != nil {
		r.t.Fatal(err)
	}
}
