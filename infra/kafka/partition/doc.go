// Package partition is the Kafka-compatible partitioner for keyed records:
// which of a topic's partitions a producer keyed by run id puts a record on.
// It is a leaf: it imports nothing, so the domain packages (commands) can
// place a run or a sandbox without linking a Kafka client.
//
// Guarantee: For agrees with the Java client's DefaultPartitioner and
// franz-go's StickyKeyPartitioner for every keyed record (a test checks it
// against franz-go's), so a run's commands and events land on the partition
// every client, ours or not (kcat -X partitioner=murmur2_random), picks.
package partition
