package kafka_test

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// produceCommands writes n command records to partition p of the commands
// topic, at offsets 0..n-1.
func produceCommands(t *testing.T, kc kafka.Config, p int32, n int) {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: kc.CommandsTopic(), Partition: p, Key: []byte("run_c"), Value: fmt.Appendf(nil, "cmd-%d", i)}
	}
	if err := cl.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatalf("produce commands: %v", err)
	}
}

func TestOwnerResumesCommandsAfterLastCommittedCommandOffset(t *testing.T) {
	t.Parallel()
	kc := kafkatest.NewTopics(t, 2)
	const p = int32(1)
	produceCommands(t, kc, p, 60)
	group, txn := kafkatest.UniqueName(t), kafkatest.UniqueName(t)

	ha := newRecorder()
	a, stopA := startOwner(t, ownerConfig(t, kc, group, txn, "a"), ha)
	eventually.Holds(t, waitTimeout, "owner A to own the partition", func() bool { return owns(a, p) })
	eventually.Holds(t, waitTimeout, "owner A to be delivered commands", func() bool { return len(ha.commands(p)) > 0 })
	if first := ha.commands(p)[0].Offset; first != 0 {
		t.Fatalf("with nothing in the log the first command delivered is offset %d, want 0", first)
	}
	part := ha.partition(t, p)
	mustAppend(t, part, 41, out("run_c", "e41"))
	mustAppend(t, part, 57, out("run_c", "e57a", "e57b"))
	mustAppend(t, part, -1, out("run_c", "no-command"))
	stopA()

	got, maxCmd := committed(t, kc, kc.EventsTopic(), p)
	equal(t, "committed events", got, []string{"e41", "e57a", "e57b", "no-command"})
	if maxCmd != 57 {
		t.Fatalf("ReadPartition command offset = %d, want 57", maxCmd)
	}

	hb := newRecorder()
	startOwner(t, ownerConfig(t, kc, group, txn, "b"), hb)
	eventually.Holds(t, waitTimeout, "owner B to be delivered commands 58 and 59", func() bool { return len(hb.commands(p)) >= 2 })
	var offs []int64
	for _, r := range hb.commands(p) {
		offs = append(offs, r.Offset)
	}
	if len(offs) != 2 || offs[0] != 58 || offs[1] != 59 {
		t.Fatalf("owner B was delivered command offsets %v, want [58 59]", offs)
	}
}
