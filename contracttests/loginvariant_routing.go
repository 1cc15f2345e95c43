package contracttests

import (
	"context"
	"fmt"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
)

// Routed reports a record of run runID that is not keyed by it or not on
// partition partition.For(runID, partitions): an executor that does not
// own the run wrote it.
func Routed(r kafka.Record, runID string, partitions int) error {
	if partitions < 1 {
		return nil
	}
	if want := partition.For(runID, partitions); r.Key != runID || r.Partition != want {
		return fmt.Errorf("run %s: record at partition %d offset %d (key %q) is not on its partition %d",
			runID, r.Partition, r.Offset, r.Key, want)
	}
	return nil
}

// eventPartitions returns the events topic's partition count.
func eventPartitions(ctx context.Context, cfg kafka.Config) (int, error) {
	cl, err := kafka.NewClient(cfg)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	return kafka.PartitionCount(ctx, cl, cfg.WithDefaults().EventsTopic())
}
