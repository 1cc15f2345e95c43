package runner

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

// observePoll records a poll of view's consumer in the metrics: the batch's
// size and, for each partition it holds records of, the lag left after it
// (the partition's last stable offset minus the next offset to read, as
// Kafka's own consumers report records-lag). A partition that returned
// nothing keeps the lag of its last fetch.
func observePoll(view string, fs kgo.Fetches) {
	n := 0
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		n += len(p.Records)
		next := p.Records[len(p.Records)-1].Offset + 1
		metrics.SetProjectorLag(view, p.Partition, max(0, p.LastStableOffset-next))
	})
	if n > 0 {
		metrics.ObserveProjectorBatch(view, n)
	}
}
