package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap/zaptest"
)

// A partition writer's produce refused with CONCURRENT_TRANSACTIONS (Kafka
// 4.x, the previous commit's markers still being written) is retried by
// franz-go after its next metadata refresh: the writer's refreshes may be
// partitionMetadataMinAge apart, not franz-go's default 5 s. The setting is
// the client's, whatever the broker: an embedded one serves here (the
// package's own test, which kafkatest cannot serve without an import cycle).
func TestPartitionWriterRefreshesMetadataSoon(t *testing.T) {
	t.Parallel()
	c, err := StartCluster(ClusterConfig{Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	kc := Config{Brokers: c.Addrs(), Partitions: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := EnsureTopics(ctx, kc); err != nil {
		t.Fatal(err)
	}
	h := catcher(make(chan *Partition, 1))
	o, err := NewOwner(OwnerConfig{Kafka: kc, Logger: zaptest.NewLogger(t)}, h)
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = o.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })
	select {
	case p := <-h:
		if got := p.prod.OptValue(kgo.MetadataMinAge); got != partitionMetadataMinAge {
			t.Fatalf("partition writer's MetadataMinAge = %v, want %v", got, partitionMetadataMinAge)
		}
	case <-ctx.Done():
		t.Fatal("partition 0 was never assigned")
	}
}

// catcher is a Handler that hands over the first partition assigned.
type catcher chan *Partition

func (c catcher) Assigned(_ context.Context, p *Partition, replay func(fn func(Record) error) error) error {
	err := replay(func(Record) error { return nil })
	select {
	case c <- p:
	default:
	}
	return err
}

func (catcher) Commands(int32, []Record) {}
func (catcher) Revoked(int32)            {}
