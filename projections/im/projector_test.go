package im_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/im"
	"github.com/xbot-runtime/xbot/projections/runner"
)

func TestMain(m *testing.M) { kafkatest.Main(m) }

// waitTimeout bounds every Kafka call of a test: generous for a loaded CI
// machine under -race, far above the milliseconds they take here.
const waitTimeout = 30 * time.Second

// outbox starts an embedded cluster on a real TCP port, creates xbot's topics
// under a prefix unique to the test and returns an IM projector publishing to
// it, with the config to read the outbox back.
func outbox(t *testing.T) (*im.Projector, kafka.Config) {
	t.Helper()
	kc := kafkatest.NewConfig(t, 4)
	ob, err := kafka.NewOutbox(kc, kc.IMOutboxTopic())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ob.Close)
	p, err := im.NewProjector(im.Config{Logger: zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel))}, ob)
	if err != nil {
		t.Fatal(err)
	}
	return p, kc
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// records places events on the events topic's partitions by run id, with
// offsets in log order, as the runner hands them over.
func records(evs []events.Envelope) []runner.Record {
	next := map[int32]int64{}
	out := make([]runner.Record, len(evs))
	for i, e := range evs {
		h := fnv.New32a()
		h.Write([]byte(e.RunID))
		p := int32(h.Sum32() % 4)
		value, err := json.Marshal(e)
		if err != nil {
			panic(err)
		}
		out[i] = runner.Record{Record: kafka.Record{Partition: p, Offset: next[p], Key: e.RunID, Value: value}, Event: e}
		next[p]++
	}
	return out
}

// published is one record read back from the outbox.
type published struct {
	key       string
	partition int32
	offset    int64
	msg       im.Message
}

func readOutbox(t *testing.T, kc kafka.Config) []published {
	t.Helper()
	var out []published
	err := kafka.ReadTopic(testCtx(t), kc, kc.IMOutboxTopic(), func(r kafka.Record) error {
		var m im.Message
		if err := json.Unmarshal(r.Value, &m); err != nil {
			return fmt.Errorf("offset %d: %w", r.Offset, err)
		}
		out = append(out, published{key: r.Key, partition: r.Partition, offset: r.Offset, msg: m})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// byConversation dedupes what an IM worker reads, by message id, keeping
// each conversation's order of first arrival.
func byConversation(t *testing.T, recs []published) (msgs map[string][]im.Message, dups int) {
	t.Helper()
	msgs = map[string][]im.Message{}
	seen := map[string]im.Message{}
	parts := map[string]int32{}
	for _, r := range recs {
		if r.key != r.msg.ConversationID {
			t.Errorf("message %s of conversation %s published with key %s", r.msg.ID, r.msg.ConversationID, r.key)
		}
		if p, ok := parts[r.key]; ok && p != r.partition {
			t.Errorf("conversation %s on partitions %d and %d", r.key, p, r.partition)
		}
		parts[r.key] = r.partition
		if first, ok := seen[r.msg.ID]; ok {
			if !sameMessage(first, r.msg) {
				t.Errorf("id %s names two different messages", r.msg.ID)
			}
			dups++
			continue
		}
		seen[r.msg.ID] = r.msg
		msgs[r.key] = append(msgs[r.key], r.msg)
	}
	return msgs, dups
}

// expected flattens logs in order and groups the messages by conversation.
func expected(t *testing.T, evs []events.Envelope) map[string][]im.Message {
	t.Helper()
	out := map[string][]im.Message{}
	for _, m := range flattenAll(t, evs) {
		out[m.ConversationID] = append(out[m.ConversationID], m)
	}
	return out
}

func sameConversations(t *testing.T, got, want map[string][]im.Message) {
	t.Helper()
	for conv, w := range want {
		if !slices.EqualFunc(got[conv], w, sameMessage) {
			t.Errorf("%s: got %d messages %v, want %d %v", conv, len(got[conv]), ids(got[conv]), len(w), ids(w))
		}
	}
	for conv := range got {
		if _, ok := want[conv]; !ok {
			t.Errorf("unexpected %s", conv)
		}
	}
}

func ids(ms []im.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%s/%d", m.RunID[len(m.RunID)-2:], m.Seq)
	}
	return out
}

// allCases concatenates the logs of several cases, interleaving nothing:
// each run's events stay in seq order, as on its partition.
func allCases(t *testing.T, names ...string) []events.Envelope {
	t.Helper()
	var evs []events.Envelope
	for _, n := range names {
		evs = append(evs, cases[n](t)...)
	}
	return evs
}

// TestProjectorPublishesKeyedMessages applies the log in uneven batches and
// redelivers some of them (a crash before the offsets were committed), then
// reads the outbox over TCP: after deduping by id, each conversation holds
// exactly the flattened messages in log order, and every message is valid.
// A rebuild (Reset, then the log from the start) publishes the same view
// again under the same ids.
func TestProjectorPublishesKeyedMessages(t *testing.T) {
	t.Parallel()
	p, kc := outbox(t)
	if p.Name() != "im" {
		t.Errorf("Name() = %q", p.Name())
	}
	if cps, err := p.Checkpoints(testCtx(t)); err != nil || cps != nil {
		t.Errorf("Checkpoints() = %v, %v; want nil (consumer group offsets)", cps, err)
	}
	evs := allCases(t, "clarification", "approval", "failed_without_session", "cancel_and_follow_up")
	recs := records(evs)
	var redelivered int
	for i, size := 0, 1; i < len(recs); i, size = i+size, size%7+1 {
		batch := recs[i:min(i+size, len(recs))]
		apply(t, p, batch)
		if size == 3 { // the runner crashed before committing: the batch comes again
			apply(t, p, batch)
			redelivered++
		}
	}
	live := readOutbox(t, kc)
	got, dups := byConversation(t, live)
	want := expected(t, evs)
	sameConversations(t, got, want)
	if redelivered == 0 || dups == 0 {
		t.Errorf("%d batches redelivered, %d duplicates read; the test should exercise redelivery", redelivered, dups)
	}
	for _, r := range live {
		checkValid(t, r.msg)
	}

	if err := p.Reset(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	apply(t, p, recs) // the rebuild: one batch from offset zero
	all := readOutbox(t, kc)
	end := map[int32]int64{}
	for _, r := range live {
		end[r.partition] = max(end[r.partition], r.offset+1)
	}
	rebuilt, dups := byConversation(t, slices.DeleteFunc(slices.Clone(all), func(r published) bool { return r.offset < end[r.partition] }))
	if dups != 0 {
		t.Errorf("the rebuild alone published %d duplicates", dups)
	}
	sameConversations(t, rebuilt, want) // the rebuilt view equals the live one
	byConversation(t, all)              // and reuses its ids for the same messages
}

func apply(t *testing.T, p *im.Projector, batch []runner.Record) {
	t.Helper()
	if err := p.Apply(testCtx(t), batch); err != nil {
		t.Fatalf("apply %d records: %v", len(batch), err)
	}
}

// TestProjectorPoison publishes the other runs of a batch holding a
// malformed record, nothing of the poisoned run from that record on, and
// returns a PoisonError naming it.
func TestProjectorPoison(t *testing.T) {
	t.Parallel()
	p, kc := outbox(t)
	good := cases["reply"](t)
	bad := cases["tools"](t)
	for i := range bad {
		bad[i].RunID, bad[i].PlatformSessionID = run4, "sess_chat-4"
	}
	const poisonSeq = 7 // after the first reply of the tools case (seq 5)
	bad[poisonSeq-1].Payload = json.RawMessage(`[]`)
	var evs []events.Envelope
	for i := range max(len(good), len(bad)) { // interleave the runs, as on two partitions
		if i < len(bad) {
			evs = append(evs, bad[i])
		}
		if i < len(good) {
			evs = append(evs, good[i])
		}
	}
	err := p.Apply(testCtx(t), records(evs))
	pe, ok := runner.IsPoison(err)
	if !ok || pe.RunID != run4 || pe.Seq != poisonSeq {
		t.Fatalf("Apply = %v, want a poison error for run %s seq %d", err, run4, poisonSeq)
	}
	got, _ := byConversation(t, readOutbox(t, kc))
	want := expected(t, good)
	want["sess_chat-4"] = expected(t, bad[:poisonSeq-1])["sess_chat-4"]
	sameConversations(t, got, want)
}

func TestNewProjectorWiring(t *testing.T) {
	t.Parallel()
	if _, err := im.NewProjector(im.Config{}, nopPublisher{}); err == nil {
		t.Error("a projector without a logger was created")
	}
	defer func() {
		if recover() == nil {
			t.Error("a nil publisher did not panic")
		}
	}()
	_, _ = im.NewProjector(im.Config{Logger: zap.NewNop()}, nil)
}

type nopPublisher struct{}

func (nopPublisher) Publish(context.Context, []kafka.OutRecord) error { return nil }
