package kafkatest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/internal/sharedsrv"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// setupTimeout bounds creating or deleting a test's topics: generous for a
// loaded CI machine under -race, far above the milliseconds it takes on
// kfake and the tenths of a second on Apache Kafka.
const setupTimeout = 30 * time.Second

// harness is the shared cluster of this test binary.
var harness = &sharedsrv.Harness[*server]{
	Name: "kafkatest", Main: "kafkatest.Main(m)",
	Start: startServer, StartTimeout: apacheStartTimeout,
}

// Main runs the tests, closes the shared cluster and exits with the tests'
// status. Call it from TestMain.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Runner is what Run runs: a *testing.M, or another harness's Run wrapping
// one (e.g. pgtest.Run(kafkatest.Wrap(m))).
type Runner = sharedsrv.Runner

// Run is Main without os.Exit: it runs the tests, closes the shared cluster
// if one was started and returns the exit code for os.Exit.
func Run(m Runner) int { return harness.Run(m) }

// Wrap returns a Runner that runs m inside this harness, for nesting
// harnesses in one TestMain.
func Wrap(m Runner) Runner { return harness.Wrap(m) }

// Shared returns the cluster of this test binary, starting it on first use.
// It fails tb if the cluster cannot start, if BrokerEnv is invalid, or if
// the package's TestMain does not call Main or Run.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	return harness.Shared(tb).shared
}

// NewTopics creates xbot's topics with the given partition count on the
// shared cluster, under a prefix unique to tb, and returns their config,
// whose GroupPrefix is unique to tb too. On Apache Kafka the topics are
// deleted when tb ends.
func NewTopics(tb testing.TB, partitions int32) kafka.Config {
	tb.Helper()
	sh := Shared(tb)
	name := UniqueName(tb)
	kc := sh.Config()
	kc.TopicPrefix, kc.GroupPrefix, kc.Partitions = name+".", name+".", partitions
	ensure(tb, kc)
	if sh.fake == nil {
		tb.Cleanup(func() { deleteTopics(tb, kc) })
	}
	return kc
}

// NewCluster gives tb a cluster of its own with xbot's topics of the given
// partition count. On kfake it is a new cluster, closed when tb ends, whose
// auto-created topics have that count too. On Apache Kafka it is a
// namespace of the shared cluster (NewTopics): topics, consumer groups and
// transactional ids no other test uses, as long as tb names them from
// Config.
func NewCluster(tb testing.TB, partitions int32) *Cluster {
	tb.Helper()
	if OnApache(tb) {
		return &Cluster{cfg: NewTopics(tb, partitions)}
	}
	c, err := kafka.StartCluster(kafka.ClusterConfig{Partitions: partitions})
	if err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	tb.Cleanup(c.Close)
	return &Cluster{cfg: kafka.Config{Brokers: c.Addrs(), Partitions: partitions}, fake: c}
}

// NewConfig is NewCluster's config, with xbot's topics created.
func NewConfig(tb testing.TB, partitions int32) kafka.Config {
	tb.Helper()
	kc := NewCluster(tb, partitions).Config()
	ensure(tb, kc)
	return kc
}

func ensure(tb testing.TB, kc kafka.Config) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := kafka.EnsureTopics(ctx, kc); err != nil {
		tb.Fatalf("kafkatest: ensure topics: %v", err)
	}
}

var nameSeq atomic.Int64

// maxNameLen keeps a prefixed topic name (prefix, ".", xbot's longest
// topic name) well within Kafka's 249 characters.
const maxNameLen = 180

// UniqueName returns a name for a topic prefix, group or transactional id
// that no other test of the binary (nor another -count repetition) uses: the
// test's name in lower case, "/" and " " as "-", any other character Kafka
// refuses in a topic name as "_", and a sequence number.
func UniqueName(tb testing.TB) string {
	var b strings.Builder
	for _, r := range strings.ToLower(tb.Name()) {
		switch {
		case r == '/' || r == ' ':
			b.WriteByte('-')
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	suffix := fmt.Sprintf("-%d", nameSeq.Add(1))
	base := b.String()
	return base[:min(len(base), maxNameLen-len(suffix))] + suffix
}
