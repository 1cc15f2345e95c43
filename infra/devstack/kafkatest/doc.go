// Package kafkatest gives tests an embedded Kafka cluster (kfake over real
// TCP, see kafka.StartCluster): one shared by the whole test binary with
// fresh topics per test, or one for a single test.
//
// The shared cluster starts lazily, on the first Shared or NewTopics call;
// Main closes it after all tests ran. NewTopics creates xbot's topics under a
// prefix no other test uses, so tests sharing the cluster never read each
// other's records, as long as their consumer groups and transactional ids
// are unique too (UniqueName). A test whose components use fixed group or
// transactional names (a whole stack, an executor) takes a cluster of its
// own with NewCluster or NewConfig instead.
//
//	func TestMain(m *testing.M) { kafkatest.Main(m) }
//
//	func TestX(t *testing.T) {
//		kc := kafkatest.NewTopics(t, 4)
//		...
//	}
package kafkatest
