// Package kafkatest gives tests Kafka: franz-go's kfake over real TCP (the
// default) or a real Apache Kafka cluster, as the environment variable
// XBOT_TEST_KAFKA (BrokerEnv) says: "kfake" or "apache"; any other value
// fails every test that asks for Kafka.
//
// A test binary has one shared cluster, started lazily on the first Shared
// or NewTopics call and closed by Main after all tests ran: a kfake broker,
// or three Apache Kafka 4.x KRaft nodes (devstack.StartApacheKafka;
// replication factor 3, min.insync.replicas 2), or, when
// XBOT_TEST_KAFKA_BROKERS (BrokersEnv) is set, the running cluster it names.
// NewTopics creates xbot's topics under a prefix no other test uses, so
// tests sharing the cluster never read each other's records, as long as
// their consumer groups and transactional ids are unique too (the returned
// config's GroupPrefix, or UniqueName).
//
// A test whose components use xbot's fixed group and transactional names (a
// whole stack, an executor) takes a cluster of its own with NewCluster or
// NewConfig: on kfake a new cluster; on Apache Kafka a namespace of the
// shared one, whose TopicPrefix and GroupPrefix no other test uses, and
// whose topics are created explicitly with the test's partition count and
// deleted when the test ends. Tests that inject faults only kfake can skip
// on Apache Kafka (RequireFake, Cluster.Fake), naming what proves the same
// on a real broker.
//
//	func TestMain(m *testing.M) { kafkatest.Main(m) }
//
//	func TestX(t *testing.T) {
//		kc := kafkatest.NewTopics(t, 4)
//		...
//	}
package kafkatest
