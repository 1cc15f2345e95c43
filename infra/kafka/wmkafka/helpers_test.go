package wmkafka_test

import (
	"context"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// One embedded broker is shared by every test of the package; tests
// keep apart by unique topics and groups.
func TestMain(m *testing.M) { kafkatest.Main(m) }

// testPartitions is the partition count of every topic the suite creates:
// several partitions, so per-partition ordering and parallel delivery are
// both exercised.
const testPartitions = 8

func kafkaConfig(t *testing.T) kafka.Config {
	return kafka.Config{Brokers: kafkatest.Shared(t).Addrs(), Partitions: testPartitions}
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

// publisher returns a publisher closed when the test ends.
func publisher(t *testing.T) *wmkafka.Publisher {
	t.Helper()
	pub, err := wmkafka.NewPublisher(wmkafka.PublisherConfig{Kafka: kafkaConfig(t)})
	if err != nil {
		t.Fatalf("new publisher: %v", err)
	}
	t.Cleanup(func() { _ = pub.Close() })
	return pub
}
