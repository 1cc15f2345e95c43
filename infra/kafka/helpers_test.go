package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// One embedded broker is shared by every test of the package; tests keep
// apart by unique topic prefixes, groups and transactional ids.
func TestMain(m *testing.M) { kafkatest.Main(m) }

// waitTimeout bounds every wait: generous for a loaded CI machine under
// -race, far above the ~100 ms a group join takes here.
const waitTimeout = 30 * time.Second

// testCtx is a context bounded by waitTimeout and cancelled when the test ends.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func testLogger(t *testing.T, name string) *zap.Logger {
	return zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel)).Named(name)
}

// ownerConfig returns an owner config for kc; owners built from the same
// group and txnPrefix are executors of one deployment.
func ownerConfig(t *testing.T, kc kafka.Config, group, txnPrefix, name string) kafka.OwnerConfig {
	return kafka.OwnerConfig{
		Kafka:          kc,
		Group:          group,
		TxnIDPrefix:    txnPrefix,
		Logger:         testLogger(t, name),
		RestartBackoff: 20 * time.Millisecond,
	}
}

// startOwner runs an owner until stop is called or the test ends.
func startOwner(t *testing.T, cfg kafka.OwnerConfig, h kafka.Handler) (o *kafka.Owner, stop func()) {
	t.Helper()
	o, err := kafka.NewOwner(cfg, h)
	if err != nil {
		t.Fatalf("new owner: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := o.Run(ctx); err != nil {
			t.Errorf("owner run: %v", err)
		}
	}()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	return o, stop
}

func owns(o *kafka.Owner, p int32) bool { return slices.Contains(o.Assigned(), p) }

// recorder is a Handler that remembers what the Owner did to it.
type recorder struct {
	mu       sync.Mutex
	parts    map[int32]*kafka.Partition
	replayed map[int32][]kafka.Record // by the latest assignment of each partition
	cmds     map[int32][]kafka.Record
	revoked  []int32
}

func newRecorder() *recorder {
	return &recorder{parts: map[int32]*kafka.Partition{}, replayed: map[int32][]kafka.Record{}, cmds: map[int32][]kafka.Record{}}
}

func (r *recorder) Assigned(_ context.Context, p *kafka.Partition, replay func(func(kafka.Record) error) error) error {
	var recs []kafka.Record
	if err := replay(func(rec kafka.Record) error { recs = append(recs, rec); return nil }); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.parts[p.ID()], r.replayed[p.ID()] = p, recs
	return nil
}

func (r *recorder) Commands(p int32, recs []kafka.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cmds[p] = append(r.cmds[p], recs...)
}

func (r *recorder) Revoked(p int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revoked = append(r.revoked, p)
}

func (r *recorder) partition(t *testing.T, p int32) *kafka.Partition {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	part, ok := r.parts[p]
	if !ok {
		t.Fatalf("partition %d was never assigned", p)
	}
	return part
}

func (r *recorder) has(p int32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.parts[p]
	return ok
}

func (r *recorder) replay(p int32) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return values(r.replayed[p])
}

func (r *recorder) commands(p int32) []kafka.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.cmds[p])
}

func (r *recorder) revokedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.revoked)
}

func values(recs []kafka.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value)
	}
	return out
}

// committed reads partition p of topic with read_committed once every
// transaction ended on it is visible: on Kafka 4.x (KIP-890) EndTxn returns
// before the commit markers are written, and until they are the last stable
// offset stays before the committed records. kfake writes them at once.
func committed(t *testing.T, kc kafka.Config, topic string, p int32) (vals []string, maxCmd int64) {
	t.Helper()
	eventually.Holds(t, waitTimeout, fmt.Sprintf("no transaction pending on %s/%d", topic, p), func() bool {
		end, stable := logEnds(t, kc, topic, p)
		return end == stable
	})
	return committedSoFar(t, kc, topic, p)
}

// committedSoFar reads partition p of topic with read_committed up to its
// last stable offset now, while a transaction may be open on it.
func committedSoFar(t *testing.T, kc kafka.Config, topic string, p int32) (vals []string, maxCmd int64) {
	t.Helper()
	var recs []kafka.Record
	maxCmd, err := kafka.ReadPartition(testCtx(t), kc, topic, p, func(r kafka.Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("read %s/%d: %v", topic, p, err)
	}
	return values(recs), maxCmd
}

func out(key string, vals ...string) []kafka.OutRecord {
	recs := make([]kafka.OutRecord, len(vals))
	for i, v := range vals {
		recs[i] = kafka.OutRecord{Key: key, Value: []byte(v)}
	}
	return recs
}

func mustAppend(t *testing.T, p *kafka.Partition, cmdOffset int64, recs []kafka.OutRecord) {
	t.Helper()
	if err := p.Append(testCtx(t), recs, cmdOffset); err != nil {
		t.Fatalf("append to partition %d: %v", p.ID(), err)
	}
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func produceKeyed(t *testing.T, kc kafka.Config, topic, prefix string, n int) {
	t.Helper()
	prod, err := kafka.NewProducer(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range n {
		if err := prod.Produce(testCtx(t), topic, fmt.Sprintf("run_%d", i%7), fmt.Appendf(nil, "%s-%d", prefix, i)); err != nil {
			t.Fatal(err)
		}
	}
}

// produceTransactions writes committed and aborted transactions, so that the
// topic has control records and records read_committed must skip.
func produceTransactions(t *testing.T, kc kafka.Config, topic string) (committedCount int) {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.TransactionalID(kafkatest.UniqueName(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for txn, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 9 {
			rec := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "run_%d", i), Value: fmt.Appendf(nil, "txn%d-%d", txn, i)}
			if err := cl.ProduceSync(testCtx(t), rec).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(testCtx(t), commit); err != nil {
			t.Fatal(err)
		}
		if commit == kgo.TryCommit {
			committedCount += 9
		}
	}
	return committedCount
}

// logEnds returns partition p's high watermark and last stable offset.
func logEnds(t *testing.T, kc kafka.Config, topic string, p int32) (end, stable int64) {
	t.Helper()
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	stables, err := adm.ListCommittedOffsets(testCtx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := ends.Lookup(topic, p)
	s, _ := stables.Lookup(topic, p)
	return e.Offset, s.Offset
}
