package wmkafka

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// commit commits the Acked offsets of partitions (all when nil). When the
// commit fails and requeue is set, the offsets are kept for the next attempt
// unless a newer one was Acked meanwhile; a failed commit only means those
// messages may be delivered again after a restart or rebalance.
func (s *subscription) commit(ctx context.Context, partitions []int32, requeue bool) {
	offs := s.takeAcked(partitions)
	if len(offs) == 0 {
		return
	}
	var err error
	s.cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{s.topic: offs},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, reqErr error) {
			err = commitError(resp, reqErr)
		})
	if err == nil {
		s.log.Trace("offsets committed", watermill.LogFields{"offsets": fmt.Sprint(offs)})
		return
	}
	s.log.Error("offset commit failed", err, watermill.LogFields{"offsets": fmt.Sprint(offs)})
	if requeue {
		s.mu.Lock()
		for p, eo := range offs {
			if _, newer := s.acked[p]; !newer {
				s.acked[p] = eo
			}
		}
		s.mu.Unlock()
	}
}

// takeAcked removes and returns the Acked offsets of partitions (all when nil).
func (s *subscription) takeAcked(partitions []int32) map[int32]kgo.EpochOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	offs := map[int32]kgo.EpochOffset{}
	for p, eo := range s.acked {
		if partitions == nil || slices.Contains(partitions, p) {
			offs[p] = eo
			delete(s.acked, p)
		}
	}
	return offs
}

func commitError(resp *kmsg.OffsetCommitResponse, reqErr error) error {
	if reqErr != nil {
		return reqErr
	}
	var errs []error
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				errs = append(errs, fmt.Errorf("partition %d: %w", p.Partition, err))
			}
		}
	}
	return errors.Join(errs...)
}

// onRevoked stops the workers of the revoked partitions, then commits what
// they Acked, before the group hands the partitions to another member.
func (s *subscription) onRevoked(ctx context.Context, cl *kgo.Client, revoked map[string][]int32) {
	ps := revoked[s.topic]
	if len(ps) == 0 {
		return
	}
	s.stopWorkers(ps)
	s.commit(ctx, ps, false)
	cl.ResumeFetchPartitions(map[string][]int32{s.topic: ps})
	s.log.Debug("partitions revoked", watermill.LogFields{"partitions": fmt.Sprint(ps)})
}

// onLost stops the workers of partitions the group already gave away; their
// Acked offsets cannot be committed any more (the new owner redelivers them).
func (s *subscription) onLost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	ps := lost[s.topic]
	if len(ps) == 0 {
		return
	}
	s.stopWorkers(ps)
	s.takeAcked(ps)
	cl.ResumeFetchPartitions(map[string][]int32{s.topic: ps})
	s.log.Info("partitions lost", watermill.LogFields{"partitions": fmt.Sprint(ps)})
}
