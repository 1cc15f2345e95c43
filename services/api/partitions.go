package api

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// partitionLookupTimeout bounds Config.CommandPartitions within a request:
// a metadata request answers in milliseconds when Kafka is up, and when it
// is not the create fails on Send anyway.
const partitionLookupTimeout = 2 * time.Second

// partitions returns the partition count of the commands topic: what
// Config.CommandPartitions answered first, else Config.Partitions.
func (a *API) partitions(ctx context.Context) int {
	if n := a.commandPartitions.Load(); n > 0 {
		return int(n)
	}
	if a.cfg.CommandPartitions == nil {
		return a.cfg.Partitions
	}
	lctx, cancel := context.WithTimeout(ctx, partitionLookupTimeout)
	defer cancel()
	n, err := a.cfg.CommandPartitions(lctx)
	if err != nil || n < 1 {
		a.log.Warn("partition count of the commands topic unknown; using the configured count",
			zap.Int("partitions", a.cfg.Partitions), zap.Int("reported", n), zap.Error(err))
		return a.cfg.Partitions
	}
	a.commandPartitions.CompareAndSwap(0, int64(n))
	return n
}
