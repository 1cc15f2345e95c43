package runner

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

// observePoll records a poll of view's consumer in the metrics before its
// batch is applied: the batch's size and, for each partition it holds
// records of, the offsets not yet in the view — the partition's last stable
// offset minus the batch's first offset (this batch and what follows it).
func observePoll(view string, fs kgo.Fetches) {
	n := 0
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		n += len(p.Records)
		metrics.SetProjectorLag(view, p.Partition, max(0, p.LastStableOffset-p.Records[0].Offset))
	})
	if n > 0 {
		metrics.ObserveProjectorBatch(view, n)
	}
}

// observeApplied records, once the batch of fs is applied, each partition's
// offsets still to read as of its fetch: the last stable offset minus the
// offset after the batch. A partition with nothing new keeps its value.
func observeApplied(view string, fs kgo.Fetches) {
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) > 0 {
			next := p.Records[len(p.Records)-1].Offset + 1
			metrics.SetProjectorLag(view, p.Partition, max(0, p.LastStableOffset-next))
		}
	})
}
