package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// GroupMembers returns how many members the consumer group has now.
func GroupMembers(ctx context.Context, c Config, group string) (int, error) {
	cl, err := NewClient(c)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	described, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil {
		return 0, fmt.Errorf("describe group %s: %w", group, err)
	}
	g, ok := described[group]
	if !ok {
		return 0, nil
	}
	if g.Err != nil && !errors.Is(g.Err, kerr.GroupIDNotFound) {
		return 0, fmt.Errorf("describe group %s: %w", group, g.Err)
	}
	return len(g.Members), nil
}

// DeleteGroup forgets a consumer group's committed offsets, so its next
// member starts from the beginning. A group that does not exist is fine.
func DeleteGroup(ctx context.Context, c Config, group string) error {
	cl, err := NewClient(c)
	if err != nil {
		return err
	}
	defer cl.Close()
	res, err := kadm.NewClient(cl).DeleteGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("delete group %s: %w", group, err)
	}
	if r, ok := res[group]; ok && r.Err != nil && !errors.Is(r.Err, kerr.GroupIDNotFound) {
		return fmt.Errorf("delete group %s: %w", group, r.Err)
	}
	return nil
}

// EndOffsets returns the last stable offset of every partition of topic
// (what a read_committed reader reaches) and the first offset.
func EndOffsets(ctx context.Context, c Config, topic string) (start, end map[int32]int64, err error) {
	cl, err := NewClient(c)
	if err != nil {
		return nil, nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start offsets of %s: %w", topic, err)
	}
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	start, end = map[int32]int64{}, map[int32]int64{}
	starts.Each(func(o kadm.ListedOffset) { start[o.Partition] = o.Offset })
	ends.Each(func(o kadm.ListedOffset) { end[o.Partition] = o.Offset })
	return start, end, nil
}

// GroupCommitted returns the consumer group's committed offsets on topic
// (partitions it never committed are absent).
func GroupCommitted(ctx context.Context, c Config, group, topic string) (map[int32]int64, error) {
	cl, err := NewClient(c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	commits, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err == nil {
		err = commits.Error()
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[int32]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	out := map[int32]int64{}
	for p, o := range commits[topic] {
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out, nil
}

// GroupLag returns, per partition of topic, how many offsets the group's
// committed position is behind the last stable offset (a partition the group
// never committed counts from the log start).
func GroupLag(ctx context.Context, c Config, group, topic string) (map[int32]int64, error) {
	start, end, err := EndOffsets(ctx, c, topic)
	if err != nil {
		return nil, err
	}
	committed, err := GroupCommitted(ctx, c, group, topic)
	if err != nil {
		return nil, err
	}
	lag := make(map[int32]int64, len(end))
	for p, e := range end {
		pos, ok := committed[p]
		if !ok || pos < start[p] {
			pos = start[p]
		}
		lag[p] = max(0, e-pos)
	}
	return lag, nil
}
