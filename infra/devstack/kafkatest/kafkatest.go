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

// setupTimeout bounds creating a test's topics: generous for a loaded CI
// machine under -race, far above the milliseconds it takes on kfake.
const setupTimeout = 30 * time.Second

// server adapts a cluster to the shared-server harness.
type server struct{ *kafka.Cluster }

func (s server) Stop(context.Context) error { s.Close(); return nil }

// harness is the shared cluster of this test binary.
var harness = &sharedsrv.Harness[server]{
	Name: "kafkatest", Main: "kafkatest.Main(m)",
	Start: func(context.Context, string) (server, error) {
		c, err := kafka.StartCluster(kafka.ClusterConfig{})
		return server{c}, err
	},
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
// It fails tb if the cluster cannot start or if the package's TestMain does
// not call Main or Run.
func Shared(tb testing.TB) *kafka.Cluster {
	tb.Helper()
	return harness.Shared(tb).Cluster
}

// NewTopics creates xbot's topics with the given partition count on the
// shared cluster, under a prefix unique to tb, and returns their config.
func NewTopics(tb testing.TB, partitions int32) kafka.Config {
	tb.Helper()
	kc := kafka.Config{Brokers: Shared(tb).Addrs(), TopicPrefix: UniqueName(tb) + ".", Partitions: partitions}
	ensure(tb, kc)
	return kc
}

// NewCluster starts a cluster for tb alone, whose auto-created topics have
// the given partition count; it is closed when tb ends.
func NewCluster(tb testing.TB, partitions int32) *kafka.Cluster {
	tb.Helper()
	c, err := kafka.StartCluster(kafka.ClusterConfig{Partitions: partitions})
	if err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// NewConfig starts a cluster for tb alone (NewCluster), creates xbot's
// topics on it with the given partition count and returns their config.
func NewConfig(tb testing.TB, partitions int32) kafka.Config {
	tb.Helper()
	kc := kafka.Config{Brokers: NewCluster(tb, partitions).Addrs(), Partitions: partitions}
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

// UniqueName returns a name for a topic prefix, group or transactional id
// that no other test of the binary (nor another -count repetition) uses: the
// test's name in lower case, "/" and " " as "-", and a sequence number.
func UniqueName(tb testing.TB) string {
	n := strings.NewReplacer("/", "-", " ", "-").Replace(tb.Name())
	return fmt.Sprintf("%s-%d", strings.ToLower(n), nameSeq.Add(1))
}
