package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

// Record is a committed record of a partition.
type Record struct {
	Partition int32
	Offset    int64
	Key       string
	Value     []byte
	// Headers are the record's headers (nil when it has none).
	Headers map[string]string
}

// cmdOffsetHeader carries the offset of the last command a transaction consumed.
const cmdOffsetHeader = "xbot-cmd-offset"

// ReadPartition reads partition p of topic with read_committed from the start
// up to its last stable offset and calls fn for each record in order. It
// returns the largest command offset found in xbot-cmd-offset headers (-1
// when none). Call it only after fencing the partition's previous writer, so
// that no transaction is left open and the last stable offset is the end.
func ReadPartition(ctx context.Context, c Config, topic string, p int32, fn func(Record) error) (int64, error) {
	maxCmd := int64(-1)
	_, err := ReadRange(ctx, c, topic, p, 0, -1, func(rec Record) error {
		if v, err := strconv.ParseInt(rec.Headers[cmdOffsetHeader], 10, 64); err == nil {
			maxCmd = max(maxCmd, v)
		}
		return fn(rec)
	})
	if err != nil {
		return -1, err
	}
	return maxCmd, nil
}

// ReadRange reads the committed records of partition p of topic with
// read_committed, from offset from (or the partition's first offset, if
// later) up to to (exclusive; -1: the last stable offset), and calls fn for
// each in order. It returns the offset it read up to. Records below the
// partition's start (deleted by retention or DeleteRecords) are not an
// error: the caller that needs them checks what it got.
func ReadRange(ctx context.Context, c Config, topic string, p int32, from, to int64, fn func(Record) error) (int64, error) {
	opts := []kgo.Opt{kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords()}
	if to >= 0 {
		// A short range (one run's events) must not fetch the megabyte a
		// fetch returns by default past its end.
		opts = append(opts, kgo.FetchMaxPartitionBytes(rangeFetchBytes(to-max(from, 0))))
	}
	cl, err := NewClient(c, opts...)
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	start, end, err := bounds(ctx, cl, topic, p)
	if err != nil {
		return -1, err
	}
	if to >= 0 {
		end = min(end, to)
	}
	from = max(from, start)
	if from >= end {
		return max(from, end), nil
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(from)}})
	next := from
	for next < end {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return -1, fmt.Errorf("read %s/%d: %w", topic, p, err)
		}
		var ferr error
		fs.EachRecord(func(r *kgo.Record) {
			// A transaction's records that read_committed drops are followed
			// by its marker: next passes them with it.
			next = max(next, r.Offset+1)
			if ferr != nil || r.Offset >= end || r.Attrs.IsControl() {
				return
			}
			rec := Record{Partition: p, Offset: r.Offset, Key: string(r.Key), Value: r.Value, Headers: headerMap(r.Headers)}
			ferr = fn(rec)
		})
		if ferr != nil {
			return -1, ferr
		}
	}
	return end, nil
}

// rangeFetchBytes is the most a fetch of a range of n records asks for:
// about 2 KiB a record, between 16 KiB and franz-go's default of 1 MiB.
// Kafka returns at least one whole batch however small this is.
func rangeFetchBytes(n int64) int32 {
	return int32(min(max(n*2048, 16<<10), 1<<20))
}

// Bounds returns the first offset of partition p of topic and its last
// stable offset.
func Bounds(ctx context.Context, c Config, topic string, p int32) (start, end int64, err error) {
	cl, err := NewClient(c)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	return bounds(ctx, cl, topic, p)
}

// ReadLast returns the last committed record of partition p of topic for
// which match is true, reading backwards from the end in growing windows;
// found is false when no record matches.
func ReadLast(ctx context.Context, c Config, topic string, p int32, match func(Record) bool) (rec Record, found bool, err error) {
	start, end, err := Bounds(ctx, c, topic, p)
	if err != nil {
		return Record{}, false, err
	}
	for window := int64(16); ; window *= 8 {
		from := max(start, end-window)
		_, err := ReadRange(ctx, c, topic, p, from, end, func(r Record) error {
			if match(r) {
				rec, found = r, true
			}
			return nil
		})
		if err != nil || found || from == start {
			return rec, found, err
		}
		end = from
	}
}

// ReadAt returns the committed record at offset of partition p of topic;
// found is false when there is none (deleted, aborted or a control record).
func ReadAt(ctx context.Context, c Config, topic string, p int32, offset int64) (rec Record, found bool, err error) {
	_, err = ReadRange(ctx, c, topic, p, offset, offset+1, func(r Record) error {
		if r.Offset == offset {
			rec, found = r, true
		}
		return nil
	})
	return rec, found, err
}

// bounds returns the first offset of partition p and its last stable offset.
// Reading stops at the latter; a partition whose records were all deleted has
// start == end and nothing to read.
//
// A broker that restarts refuses connections for a while, or closes one
// before its first answer, which franz-go does not retry (it takes the close
// for a missing SASL setting; the process's start checked the settings with
// EnsureTopics). bounds asks again after such a failure, backing off, for up
// to readRetryFor: an executor reading a run's events at that moment would
// otherwise fail the run.
func bounds(ctx context.Context, cl *kgo.Client, topic string, p int32) (start, end int64, err error) {
	giveUp := time.Now().Add(readRetryFor)
	for delay := 50 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		start, end, err = listBounds(ctx, cl, topic, p)
		if err == nil || !transient(err) || time.Now().Add(delay).After(giveUp) {
			return start, end, err
		}
		metrics.CountReadRetry(topic)
		if hook := testHookReadRetry.Load(); hook != nil {
			(*hook)(topic, err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, 0, errors.Join(ctx.Err(), err)
		case <-t.C:
		}
	}
}

// readRetryFor is how long bounds tries again after transient failures:
// longer than a broker takes to restart.
const readRetryFor = time.Minute

// testHookReadRetry, when set, is called each time bounds tries again.
var testHookReadRetry atomic.Pointer[func(topic string, err error)]

// transient reports whether err is a broker's failure to answer that a later
// try may not meet: a dial refused or failed, a connection closed or reset
// (a net.Error, which a system call's errno is too), an EOF, a Kafka error
// code Kafka calls retriable (a leader moving).
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kgo.ErrClientClosed) {
		return false
	}
	var ne net.Error
	return kerr.IsRetriable(err) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func listBounds(ctx context.Context, cl *kgo.Client, topic string, p int32) (start, end int64, err error) {
	adm := kadm.NewClient(cl)
	lookup := func(offs kadm.ListedOffsets, err error) (int64, error) {
		if err != nil {
			return 0, fmt.Errorf("list offsets of %s: %w", topic, err)
		}
		o, ok := offs.Lookup(topic, p)
		if !ok {
			return 0, fmt.Errorf("list offsets of %s: partition %d missing", topic, p)
		}
		if o.Err != nil {
			return 0, fmt.Errorf("list offsets of %s/%d: %w", topic, p, o.Err)
		}
		return o.Offset, nil
	}
	if start, err = lookup(adm.ListStartOffsets(ctx, topic)); err != nil {
		return 0, 0, err
	}
	end, err = lookup(adm.ListCommittedOffsets(ctx, topic))
	return start, end, err
}

// ReadTopic reads every partition of topic like ReadPartition, partition by
// partition, calling fn for each committed record.
func ReadTopic(ctx context.Context, c Config, topic string, fn func(Record) error) error {
	cl, err := NewClient(c)
	if err != nil {
		return err
	}
	n, err := PartitionCount(ctx, cl, topic)
	cl.Close()
	if err != nil {
		return err
	}
	for p := int32(0); p < int32(n); p++ {
		if _, err := ReadPartition(ctx, c, topic, p, fn); err != nil {
			return err
		}
	}
	return nil
}

// headerMap returns a record's headers by key (nil when it has none; the
// last of repeated keys wins).
func headerMap(hs []kgo.RecordHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Key] = string(h.Value)
	}
	return m
}

// recordHeaders turns a header map into record headers, sorted by key so the
// same map always gives the same record.
func recordHeaders(m map[string]string) []kgo.RecordHeader {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	hs := make([]kgo.RecordHeader, 0, len(keys))
	for _, k := range keys {
		hs = append(hs, kgo.RecordHeader{Key: k, Value: []byte(m[k])})
	}
	return hs
}
