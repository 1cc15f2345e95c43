// Package wmkafka is a watermill Publisher and Subscriber over franz-go, for
// components (the projector runner) that want watermill's router and
// middleware on top of xbot's Kafka topics.
//
// Guarantees:
//
//   - Publish returns only after every record of the call is acknowledged by
//     the cluster (idempotent producer, acks=all), or returns the error.
//     Records of one call with the same key keep their order.
//   - A Subscriber reads with read_committed isolation: records of aborted or
//     still-open transactions are never delivered.
//   - Delivery is at least once. Within a partition, messages are delivered
//     one at a time in offset order: the next message of a partition is sent
//     only after the previous one is Acked. A Nacked message is delivered
//     again (after SubscriberConfig.NackResendDelay) before anything behind it.
//   - With a consumer group, an offset is committed only after its message —
//     and every message before it in the partition — was Acked. A message
//     whose partition is revoked, or whose subscriber closes, before it is
//     Acked is delivered again to the next owner, so handlers must be
//     idempotent.
//   - Without a consumer group, every Subscribe reads every partition from the
//     beginning and commits nothing.
//   - Closing the Subscriber (or cancelling a Subscribe context) cancels the
//     context of every in-flight message, commits what was Acked, leaves the
//     group and closes the output channel; Close returns after all of that.
package wmkafka
