package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/infra/metrics"
)

// ErrPartitionLost is returned by Append once the partition is no longer
// owned: it was revoked, or an earlier append failed and the owner gave it up.
var ErrPartitionLost = errors.New("partition no longer owned")

// endTxnTimeout bounds EndTransaction. Ending must not be tied to the caller's
// context: a cancelled commit has an unknown outcome (it may have landed).
const endTxnTimeout = 30 * time.Second

// OutRecord is a record to append: the run id as key and the encoded event.
type OutRecord struct {
	Key   string
	Value []byte
	// Topic is "" for the partition's own events topic. Any other topic (the
	// commands topic, for a command an event causes) gets the record in the
	// same transaction, in the partition the default partitioner picks for Key.
	Topic string
	// Headers are extra record headers (a command's signature, a dead
	// letter's reason).
	Headers map[string]string
	// SamePartition writes the record to this partition's number of Topic
	// instead of the one Key hashes to (checkpoints: partition p of the
	// checkpoints topic summarises partition p's runs).
	SamePartition bool
	// Offset is set by a successful Append to the offset the record got.
	Offset int64
}

// Partition is the single writer of one partition of the events topic, held
// by an Owner while the consumer group assigns it the same partition of the
// commands topic.
type Partition struct {
	id      int32
	topic   string
	prod    *kgo.Client
	onFatal func(error)
	hooks   *Hooks
	// counts are the partition counts of the other topics appends may write.
	counts map[string]int
	// cmdTopic is the commands topic, one of counts.
	cmdTopic string

	mu     sync.Mutex
	closed bool
	// ends are, per topic, the offset after the last record an Append of
	// this owner wrote to this partition's number (an upper bound of what
	// is committed there, and a lower bound of every later record's offset).
	ends map[string]int64
	// handingBack is set once the partition is being revoked.
	handingBack atomic.Bool
	// resumeAt is the offset of the first command the handler has not
	// consumed (-1 until it says).
	resumeAt int64
}

// ResumeAt tells the Owner where the commands of this partition that the
// handler has not consumed begin; call it from Handler.Assigned.
func (p *Partition) ResumeAt(offset int64) { p.resumeAt = offset }

// ResumeOffset returns the offset ResumeAt set (-1 when not set).
func (p *Partition) ResumeOffset() int64 { return p.resumeAt }

// End returns the offset after the last record this owner appended to this
// partition's number of topic, or -1 when it appended none there yet.
func (p *Partition) End(topic string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.ends[topic]; ok {
		return e
	}
	return -1
}

// Partitions returns the partition count of the commands topic, which equals
// the events topic's (EnsureTopics refuses topics whose counts differ).
func (p *Partition) Partitions() int { return p.counts[p.cmdTopic] }

// ID returns the partition number.
func (p *Partition) ID() int32 { return p.id }

// Append writes recs to the partition in one transaction. cmdOffset >= 0 is
// the offset of the last command whose effects recs complete; it commits
// atomically with them. Append returns nil only when the transaction
// committed. Any error means the outcome is unknown or the writer was fenced:
// the partition becomes unusable (every later Append returns
// ErrPartitionLost) and the Owner restarts its session, so that the next
// owner rebuilds from what actually committed. An Append that fails while
// the partition is being revoked (its caller cancels it to stop) leaves the
// session alone: the partition is on its way to its next owner already, and
// the Owner's other partitions stay where they are.
func (p *Partition) Append(ctx context.Context, recs []OutRecord, cmdOffset int64) error {
	if len(recs) == 0 {
		return errors.New("append: no records (an empty transaction commits nothing)")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrPartitionLost
	}
	if err := p.transact(ctx, recs, cmdOffset); err != nil {
		p.closed = true
		p.prod.Close()
		err = fmt.Errorf("append to %s/%d: %w", p.topic, p.id, err)
		if !p.handingBack.Load() {
			p.onFatal(err)
		}
		return err
	}
	return nil
}

func (p *Partition) transact(ctx context.Context, recs []OutRecord, cmdOffset int64) error {
	defer metrics.ObserveTransaction(p.id, len(recs), time.Now())
	if err := p.prod.BeginTransaction(); err != nil {
		return err
	}
	var headers []kgo.RecordHeader
	if cmdOffset >= 0 {
		headers = []kgo.RecordHeader{{Key: cmdOffsetHeader, Value: []byte(strconv.FormatInt(cmdOffset, 10))}}
	}
	var (
		mu      sync.Mutex
		prodErr error
		ends    = map[string]int64{}
	)
	for i, r := range recs {
		rec, err := p.record(r, headers)
		if err != nil {
			return err
		}
		p.prod.Produce(ctx, rec, func(pr *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			prodErr = errors.Join(prodErr, err)
			if err == nil {
				recs[i].Offset = pr.Offset
				if pr.Partition == p.id {
					ends[pr.Topic] = max(ends[pr.Topic], pr.Offset+1)
				}
			}
		})
	}
	flushErr := p.prod.Flush(ctx)
	if p.hooks != nil && p.hooks.BeforeCommit != nil {
		p.hooks.BeforeCommit(p.id, recs)
	}
	// Flush returns early when ctx ends, with callbacks still to come on
	// franz-go's goroutines: read their error under the lock. A flush error
	// aborts anyway, so a callback that arrives later changes nothing.
	mu.Lock()
	perr := prodErr
	mu.Unlock()
	commit := kgo.TryCommit
	if perr != nil || flushErr != nil {
		commit = kgo.TryAbort
	}
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), endTxnTimeout)
	defer cancel()
	if err := p.prod.EndTransaction(ectx, commit); err != nil {
		return fmt.Errorf("end transaction (outcome unknown): %w", err)
	}
	if err := errors.Join(perr, flushErr); err != nil {
		return err
	}
	mu.Lock()
	for t, e := range ends {
		p.ends[t] = max(p.ends[t], e)
	}
	mu.Unlock()
	return nil
}

// GiveUp stops the writer as a failed Append does: every later Append
// returns ErrPartitionLost and the Owner restarts its session, so that the
// partition's next owner starts from what committed.
func (p *Partition) GiveUp(cause error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	p.prod.Close()
	if !p.handingBack.Load() {
		p.onFatal(fmt.Errorf("partition %s/%d given up: %w", p.topic, p.id, cause))
	}
}

// record is the Kafka record of r: on this partition of the events topic
// with the transaction's headers, or on another topic.
func (p *Partition) record(r OutRecord, headers []kgo.RecordHeader) (*kgo.Record, error) {
	if r.Topic == "" || r.Topic == p.topic {
		return &kgo.Record{Topic: p.topic, Partition: p.id, Key: []byte(r.Key), Value: r.Value,
			Headers: append(recordHeaders(r.Headers), headers...)}, nil
	}
	n, ok := p.counts[r.Topic]
	if !ok {
		return nil, fmt.Errorf("append: topic %s is not writable by this partition's producer", r.Topic)
	}
	rec := &kgo.Record{Topic: r.Topic, Partition: partition.For(r.Key, n), Key: []byte(r.Key), Value: r.Value,
		Headers: recordHeaders(r.Headers)}
	if r.SamePartition {
		if int(p.id) >= n {
			return nil, fmt.Errorf("append: topic %s has no partition %d", r.Topic, p.id)
		}
		rec.Partition = p.id
	}
	return rec, nil
}

// revoking marks the partition as being handed back to the group, before
// its handler is told to stop: an append the handler cancels then fails
// without restarting the session. A revoke during a rebalance would
// otherwise end the session of every partition the member keeps, and its
// rejoining start the next rebalance: on a broker whose rebalances take
// seconds, two executors took turns doing that to each other.
func (p *Partition) revoking() { p.handingBack.Store(true) }

// close stops the writer without ending an open transaction; waiting for the
// mutex means an in-flight Append finishes first.
func (p *Partition) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		p.prod.Close()
	}
}

// kill closes the writer at once, even in the middle of a transaction, as a
// crashed process would. Tests only.
func (p *Partition) kill() { p.prod.Close() }

// Hooks are test-only fault injection points.
type Hooks struct {
	// BeforeCommit runs after a transaction's records are flushed and before
	// it is ended, with the records the transaction holds (read only). A
	// test that kills a writer at a point of the protocol (mid-stream, at a
	// tool's start) picks the transaction by what it holds, not by how many
	// came before it: how appends group into transactions depends on the
	// broker's speed.
	BeforeCommit func(partition int32, recs []OutRecord)
}
