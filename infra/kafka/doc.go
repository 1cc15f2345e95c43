// Package kafka is xbot's only door to Kafka: franz-go clients built from
// configuration, topic creation, an embedded kfake cluster for development and
// tests, the partition-owner machinery the executor appends through, the
// partition reader it rebuilds from, and the Tail the UI stream follows the
// log with. The projectors consume through the consumer-group subscriber of
// package wmkafka.
//
// Guarantees: an Owner appends to partition p of the events topic only while
// it holds p's transactional producer; a new owner's initialisation fences the
// old one, whose appends then fail and are never visible to read_committed
// readers. The offset of the last command a transaction consumed travels in
// that transaction's records (header xbot-cmd-offset), so "events written"
// and "command consumed" commit atomically and a new owner resumes consuming
// exactly after the last command whose effects are in the log.
package kafka
