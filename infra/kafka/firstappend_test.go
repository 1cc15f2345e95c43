package kafka_test

import (
	"fmt"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
)

// The first append of a fresh partition writer is the one franz-go's topic
// loading can turn into an abort reported as a commit (see learnTopic):
// every takeover makes one per partition. Each must be readable once
// Append returns nil, on every partition, owner after owner.
func TestFirstAppendOfEveryTakeoverCommits(t *testing.T) {
	t.Parallel()
	const partitions, owners = 6, 3
	kc := kafkatest.NewTopics(t, partitions)
	group, txn := kafkatest.UniqueName(t), kafkatest.UniqueName(t)
	want := make(map[int32][]string, partitions)
	for i := range owners {
		h := newRecorder()
		o, stop := startOwner(t, ownerConfig(t, kc, group, txn, fmt.Sprint("owner", i)), h)
		eventually.Holds(t, waitTimeout, fmt.Sprintf("owner %d to own every partition", i), func() bool {
			return len(o.Assigned()) == partitions
		})
		for p := range int32(partitions) {
			v := fmt.Sprintf("owner%d-p%d", i, p)
			mustAppend(t, h.partition(t, p), -1, out("run_first", v))
			want[p] = append(want[p], v)
		}
		stop()
	}
	for p := range int32(partitions) {
		got, _ := committed(t, kc, kc.EventsTopic(), p)
		equal(t, fmt.Sprintf("committed events of partition %d", p), got, want[p])
	}
}
