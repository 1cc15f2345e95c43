package partition_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/kafka/partition"
)

// TestForIsTheProducersPartitioner: For, computed
// directly, is where franz-go's default partitioner (the Java client's for
// keyed records) puts a record, for every key length and partition count.
func TestForIsTheProducersPartitioner(t *testing.T) {
	t.Parallel()
	part := kgo.StickyKeyPartitioner(nil).ForTopic("")
	for _, n := range []int{1, 2, 3, 4, 12, 64} {
		for i := range 3000 {
			key := strings.Repeat("k", i%7) + fmt.Sprint(i) // every length modulo 4, and the empty tail
			want := int32(part.Partition(&kgo.Record{Key: []byte(key)}, n))
			if got := partition.For(key, n); got != want {
				t.Fatalf("For(%q, %d) = %d, franz-go's partitioner says %d", key, n, got, want)
			}
		}
	}
}
