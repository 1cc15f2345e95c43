package kafka

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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
	cl, err := NewClient(c,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	start, end, err := bounds(ctx, cl, topic, p)
	if err != nil {
		return -1, err
	}
	maxCmd := int64(-1)
	for next := start; next < end; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return -1, fmt.Errorf("read %s/%d: %w", topic, p, err)
		}
		var ferr error
		fs.EachRecord(func(r *kgo.Record) {
			next = r.Offset + 1
			if ferr != nil || r.Attrs.IsControl() {
				return
			}
			maxCmd = max(maxCmd, headerOffset(r))
			rec := Record{Partition: p, Offset: r.Offset, Key: string(r.Key), Value: r.Value, Headers: headerMap(r.Headers)}
			ferr = fn(rec)
		})
		if ferr != nil {
			return -1, ferr
		}
	}
	return maxCmd, nil
}

// bounds returns the first offset of partition p and its last stable offset.
// Reading stops at the latter; a partition whose records were all deleted has
// start == end and nothing to read.
func bounds(ctx context.Context, cl *kgo.Client, topic string, p int32) (start, end int64, err error) {
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

func headerOffset(r *kgo.Record) int64 {
	for _, h := range r.Headers {
		if h.Key == cmdOffsetHeader {
			if v, err := strconv.ParseInt(string(h.Value), 10, 64); err == nil {
				return v
			}
		}
	}
	return -1
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
