package devstack_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
)

// kafkaTestEnv selects the Kafka the opt-in tests run against; these tests
// run only when it is "apache", as three JVMs take a minute and ~1 GB.
const kafkaTestEnv = "XBOT_TEST_KAFKA"

func TestApacheKafkaThreeBrokers(t *testing.T) {
	if os.Getenv(kafkaTestEnv) != "apache" {
		t.Skip("set " + kafkaTestEnv + "=apache to run against a real Apache Kafka cluster")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	started := time.Now()
	k, err := devstack.StartApacheKafka(ctx, devstack.ApacheKafkaConfig{Dir: dir, Brokers: 3, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	t.Logf("figure: Apache Kafka %s, 3 brokers, start to ready (jars cached: JVM start, format, metadata, first transaction): %s",
		k.Version(), time.Since(started).Round(time.Millisecond))
	for i := range 3 {
		t.Logf("figure: broker %d RSS after start: %s", k.NodeID(i), rss(t, k.PID(i)))
	}

	t.Run("read_committed sees only committed records", func(t *testing.T) { testCommittedOnly(phase(t), t, k) })
	t.Run("EndTxn latency", func(t *testing.T) { testEndTxnLatency(phase(t), t, k) })
	t.Run("leader killed, acks=all still accepted", func(t *testing.T) { testLeaderKilled(phase(t), t, k) })
	t.Run("every broker killed, StartAll serves the data again", func(t *testing.T) { testAllKilled(phase(t), t, k) })
	for i := range 3 {
		t.Logf("figure: broker %d RSS at the end: %s", k.NodeID(i), rss(t, k.PID(i)))
	}

	closing := time.Now()
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("figure: Close took %s", time.Since(closing).Round(time.Millisecond))
	if left := javaProcessesIn(k.Dir()); len(left) > 0 {
		t.Fatalf("java processes of the cluster left after Close: %v", left)
	}
}

func testCommittedOnly(ctx context.Context, t *testing.T, k *devstack.ApacheKafka) {
	topic := createTopic(ctx, t, k, 1)
	p := kafkaClient(t, k, kgo.TransactionalID("committed-only"), kgo.DefaultProduceTopic(topic))
	transact(ctx, t, p, kgo.TryCommit, "c-1", "c-2")
	transact(ctx, t, p, kgo.TryAbort, "a-1", "a-2")
	transact(ctx, t, p, kgo.TryCommit, "c-end")

	committed := consumeUntil(ctx, t, k, topic, kgo.ReadCommitted(), "c-end")
	if want := []string{"c-1", "c-2", "c-end"}; !slices.Equal(committed, want) {
		t.Errorf("read_committed saw %v, want %v", committed, want)
	}
	all := consumeUntil(ctx, t, k, topic, kgo.ReadUncommitted(), "c-end")
	if want := []string{"c-1", "c-2", "a-1", "a-2", "c-end"}; !slices.Equal(all, want) {
		t.Errorf("read_uncommitted saw %v, want %v", all, want)
	}
}

func testEndTxnLatency(ctx context.Context, t *testing.T, k *devstack.ApacheKafka) {
	topic := createTopic(ctx, t, k, 1)
	p := kafkaClient(t, k, kgo.TransactionalID("latency"), kgo.DefaultProduceTopic(topic))
	const n = 200
	took := make([]time.Duration, 0, n)
	for i := range n {
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := p.ProduceSync(ctx, kgo.StringRecord("r")).FirstErr(); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		start := time.Now()
		if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	t.Logf("figure: EndTxn (commit) of %d one-record transactions, RF 3: p50 %s, p99 %s, max %s",
		n, took[n/2], took[n*99/100-1], took[n-1])
}

func testLeaderKilled(ctx context.Context, t *testing.T, k *devstack.ApacheKafka) {
	topic := createTopic(ctx, t, k, 1)
	adm := kadm.NewClient(kafkaClient(t, k))
	// A topic just created may not have elected its leader yet (node ids
	// start at 1; a partition the metadata does not hold yet reads 0).
	var leader int32
	eventually.Holds(t, time.Minute, "the new topic's partition has a leader", func() bool {
		leader = partitionState(ctx, t, adm, topic).Leader
		return leader >= 1
	})
	p := kafkaClient(t, k, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err := p.ProduceSync(ctx, kgo.StringRecord("before")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := k.Kill(int(leader - 1)); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, kgo.StringRecord("after")).FirstErr(); err != nil {
		t.Fatalf("acks=all produce after killing leader %d: %v", leader, err)
	}
	t.Logf("figure: first acks=all produce after killing leader %d succeeded after %s", leader, time.Since(killed).Round(time.Millisecond))
	eventually.Holds(t, time.Minute, "a new leader and an ISR of the two live brokers", func() bool {
		st := partitionState(ctx, t, adm, topic)
		return st.Leader != leader && len(st.ISR) == 2 && !slices.Contains(st.ISR, leader)
	})
	for i := range 10 {
		if err := p.ProduceSync(ctx, kgo.StringRecord("more")).FirstErr(); err != nil {
			t.Fatalf("acks=all produce %d with 2 of 3 in sync: %v", i, err)
		}
	}
	restarted := time.Now()
	if err := k.Start(ctx, int(leader-1)); err != nil {
		t.Fatal(err)
	}
	t.Logf("figure: killed broker %d restarted and listed after %s", leader, time.Since(restarted).Round(time.Millisecond))
}

func testAllKilled(ctx context.Context, t *testing.T, k *devstack.ApacheKafka) {
	topic := createTopic(ctx, t, k, 1)
	p := kafkaClient(t, k, kgo.TransactionalID("all-killed"), kgo.DefaultProduceTopic(topic))
	transact(ctx, t, p, kgo.TryCommit, "before")
	for i := range 3 {
		if err := k.Kill(i); err != nil {
			t.Fatal(err)
		}
	}
	restarted := time.Now()
	if err := k.StartAll(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("figure: every broker killed, StartAll ready after %s", time.Since(restarted).Round(time.Millisecond))
	transact(ctx, t, p, kgo.TryCommit, "after")
	if got := consumeUntil(ctx, t, k, topic, kgo.ReadCommitted(), "after"); !slices.Equal(got, []string{"before", "after"}) {
		t.Errorf("read_committed saw %v, want [before after]", got)
	}
}

// phase bounds one part of the cluster test on its own, so that a slow start
// on a loaded machine does not eat the time of the parts after it.
func phase(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// kafkaClient is a client of k closed when the test ends.
func kafkaClient(t *testing.T, k *devstack.ApacheKafka, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(k.Addrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// createTopic creates a topic named for the test, replicated on every broker.
func createTopic(ctx context.Context, t *testing.T, k *devstack.ApacheKafka, partitions int32) string {
	t.Helper()
	topic := "t-" + strings.NewReplacer("/", "-", " ", "-", "=", "-", ",", "").Replace(t.Name())
	resp, err := kadm.NewClient(kafkaClient(t, k)).CreateTopic(ctx, partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	return topic
}

// transact produces values in one transaction and ends it with how.
func transact(ctx context.Context, t *testing.T, p *kgo.Client, how kgo.TransactionEndTry, values ...string) {
	t.Helper()
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := p.ProduceSync(ctx, kgo.StringRecord(v)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.EndTransaction(ctx, how); err != nil {
		t.Fatal(err)
	}
}

// consumeUntil reads topic from the start at level until it sees last.
func consumeUntil(ctx context.Context, t *testing.T, k *devstack.ApacheKafka, topic string, level kgo.IsolationLevel, last string) []string {
	t.Helper()
	c := kafkaClient(t, k, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(level),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var seen []string
	for !slices.Contains(seen, last) {
		fs := c.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: saw %v, not %q: %v", topic, seen, last, err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen = append(seen, string(r.Value)) })
	}
	return seen
}

// partitionState returns partition 0 of topic as the cluster sees it.
func partitionState(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) kadm.PartitionDetail {
	t.Helper()
	m, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return m.Topics[topic].Partitions[0]
}

// rss returns the resident set size line of pid from /proc.
func rss(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// javaProcessesIn lists live processes whose command line is java and names
// a path under dir.
func javaProcessesIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if strings.HasSuffix(args[0], "java") && strings.Contains(string(b), dir) && !isZombie(e.Name()) {
			found = append(found, e.Name()+" "+strings.Join(args, " "))
		}
	}
	return found
}

// isZombie reports whether /proc/pid is a process that has exited.
func isZombie(pid string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

func TestApacheKafkaOneBroker(t *testing.T) {
	if os.Getenv(kafkaTestEnv) != "apache" {
		t.Skip("set " + kafkaTestEnv + "=apache to run against a real Apache Kafka broker")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	started := time.Now()
	k, err := devstack.StartApacheKafka(ctx, devstack.ApacheKafkaConfig{Dir: t.TempDir(), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	t.Logf("figure: 1 broker, start to ready: %s, RSS %s", time.Since(started).Round(time.Millisecond), rss(t, k.PID(0)))
	topic := createTopic(ctx, t, k, 1)
	p := kafkaClient(t, k, kgo.TransactionalID("one-broker"), kgo.DefaultProduceTopic(topic))
	transact(ctx, t, p, kgo.TryCommit, "only")
	if got := consumeUntil(ctx, t, k, topic, kgo.ReadCommitted(), "only"); len(got) != 1 {
		t.Errorf("read %v, want [only]", got)
	}
	// A snappy batch (a value that compresses: franz-go sends a batch
	// compression does not shrink as it is) makes the broker unpack
	// snappy-java's native library to validate it: into the data root,
	// where a killed broker's copy goes with the cluster, not the machine's
	// /tmp.
	compressed := kafkaClient(t, k, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	if err := compressed.ProduceSync(ctx, kgo.StringRecord(strings.Repeat("snappy ", 1024))).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if unpacked, _ := filepath.Glob(filepath.Join(k.Dir(), "tmp", "snappy-*")); len(unpacked) == 0 {
		t.Errorf("no snappy-java library in %s after a snappy batch: the broker's java.io.tmpdir is elsewhere",
			filepath.Join(k.Dir(), "tmp"))
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if left := javaProcessesIn(k.Dir()); len(left) > 0 {
		t.Fatalf("java processes left after Close: %v", left)
	}
}

// TestApacheKafkaStartsAgainWhenAPortIsTaken: a node that finds its port
// taken when it binds it (picked free seconds earlier, then taken by
// another process) makes the start begin again on other ports, not fail.
func TestApacheKafkaStartsAgainWhenAPortIsTaken(t *testing.T) {
	if os.Getenv(kafkaTestEnv) != "apache" {
		t.Skip("set " + kafkaTestEnv + "=apache to run against a real Apache Kafka broker")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	taken, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = taken.Close() }()
	// The node's client port is the one taken; it is let go once the first
	// start has failed on it, so the second start binds it.
	var again atomic.Int32
	log := zaptest.NewLogger(t, zaptest.WrapOptions(zap.Hooks(func(e zapcore.Entry) error {
		if strings.Contains(e.Message, "starting again on other ports") && again.Add(1) == 1 {
			_ = taken.Close()
		}
		return nil
	})))
	k, err := devstack.StartApacheKafka(ctx, devstack.ApacheKafkaConfig{Dir: t.TempDir(), Logger: log,
		BrokerPort: taken.Addr().(*net.TCPAddr).Port})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	if n := again.Load(); n != 1 {
		t.Errorf("the start began again %d times, want once", n)
	}
	topic := createTopic(ctx, t, k, 1)
	p := kafkaClient(t, k, kgo.TransactionalID("port-taken"), kgo.DefaultProduceTopic(topic))
	transact(ctx, t, p, kgo.TryCommit, "served")
}

func TestApacheKafkaJVMFailureShowsTheLog(t *testing.T) {
	if os.Getenv(kafkaTestEnv) != "apache" {
		t.Skip("set " + kafkaTestEnv + "=apache to run against a real Apache Kafka broker")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	_, err := devstack.StartApacheKafka(ctx, devstack.ApacheKafkaConfig{Dir: dir, JVMOpts: []string{"-XX:+NoSuchOption"}})
	if err == nil || !strings.Contains(err.Error(), "NoSuchOption") || !strings.Contains(err.Error(), "kafka.log") {
		t.Fatalf("want an error with the tail of the node's log naming the bad option, got %v", err)
	}
	if left := javaProcessesIn(dir); len(left) > 0 {
		t.Fatalf("java processes left after a failed start: %v", left)
	}
}

// kafkaHelperDirEnv makes the test binary act as a caller that starts a
// Kafka cluster and then waits to be killed.
const kafkaHelperDirEnv = "DEVSTACK_TEST_KAFKA_HELPER_DIR"

func TestApacheKafkaDiesWithCaller(t *testing.T) {
	if dir := os.Getenv(kafkaHelperDirEnv); dir != "" {
		runKafkaHelper(dir)
		return
	}
	if os.Getenv(kafkaTestEnv) != "apache" {
		t.Skip("set " + kafkaTestEnv + "=apache to run against a real Apache Kafka broker")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := startHelper(t, "TestApacheKafkaDiesWithCaller", kafkaHelperDirEnv, dir)
	if len(javaProcessesIn(dir)) != 1 {
		t.Fatalf("want one broker while the helper runs, have %v", javaProcessesIn(dir))
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup code runs
		t.Fatal(err)
	}
	_ = cmd.Wait()
	eventually.Holds(t, 30*time.Second, "brokers of a killed caller to exit", func() bool {
		return len(javaProcessesIn(dir)) == 0
	})
}

// runKafkaHelper starts one broker on dir, reports it and blocks until killed.
func runKafkaHelper(dir string) {
	if _, err := devstack.StartApacheKafka(context.Background(), devstack.ApacheKafkaConfig{Dir: dir}); err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("ready\n")
	select {}
}
