// Package wmkafka is a watermill Publisher over franz-go: the projector
// runner writes dead letters and rebuild markers with it, as watermill
// messages whose metadata become record headers.
//
// Guarantees:
//
//   - Publish returns only after every record of the call is acknowledged by
//     the cluster (idempotent producer, acks=all), or returns the error.
//     Records of one call with the same key keep their order.
//   - A record is keyed by the message's KeyMetadata field (else its UUID)
//     and carries the UUID in UUIDHeader, so a reader can tell redeliveries
//     of one message apart from new ones.
//   - Close waits for the Publish calls in flight; later calls fail with
//     ErrPublisherClosed.
package wmkafka
