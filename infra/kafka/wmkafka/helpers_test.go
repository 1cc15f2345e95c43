package wmkafka_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// cluster is one embedded broker shared by every test of the package; tests
// keep apart by unique topics and groups.
var cluster *kafka.Cluster

func TestMain(m *testing.M) {
	c, err := kafka.StartCluster(kafka.ClusterConfig{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start embedded kafka:", err)
		os.Exit(1)
	}
	cluster = c
	code := m.Run()
	c.Close()
	os.Exit(code)
}

// testPartitions is the partition count of every topic the suite creates:
// several partitions, so per-partition ordering and parallel delivery are
// both exercised.
const testPartitions = 8

func kafkaConfig() kafka.Config {
	return kafka.Config{Brokers: cluster.Addrs(), Partitions: testPartitions}
}

var nameSeq atomic.Int64

// uniqueName returns a name no other test (or -count repetition) uses.
func uniqueName(t *testing.T) string {
	t.Helper()
	n := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return fmt.Sprintf("%s-%d", strings.ToLower(n), nameSeq.Add(1))
}

// waitTimeout bounds every wait: generous for a loaded 2-core CI machine
// under -race, far above the ~100 ms a group join takes on kfake.
const waitTimeout = 30 * time.Second

// testCtx is a context bounded by waitTimeout and cancelled when the test ends.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func publisher(t *testing.T) *wmkafka.Publisher {
	t.Helper()
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: kafkaConfig()})
	if err != nil {
		t.Fatalf("new publisher: %v", err)
	}
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}
