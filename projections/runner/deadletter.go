package runner

import (
	"fmt"
	"strconv"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/kafka/wmkafka"
)

// deadLetter writes p to the dead-letter topic, keyed by its run, with its
// own headers and those an operator needs (why, which projector, where).
// The run's projection must already be marked stopped.
func (r *Runner) deadLetter(p pending, pe *PoisonError) error {
	uuid := p.rec.Headers[wmkafka.UUIDHeader]
	if uuid == "" {
		uuid = fmt.Sprintf("%s/%d/%d", p.topic, p.rec.Partition, p.rec.Offset)
	}
	msg := message.NewMessage(uuid, p.rec.Value)
	for k, v := range p.rec.Headers {
		if k != wmkafka.UUIDHeader {
			msg.Metadata.Set(k, v)
		}
	}
	msg.Metadata.Set(HeaderReason, pe.Error())
	msg.Metadata.Set(middleware.PoisonedTopicKey, p.topic)
	msg.Metadata.Set(middleware.PoisonedHandlerKey, "project-"+r.cfg.Projector.Name())
	msg.Metadata.Set(HeaderProjector, r.cfg.Projector.Name())
	msg.Metadata.Set(HeaderRunID, pe.RunID)
	msg.Metadata.Set(HeaderSeq, fmt.Sprint(pe.Seq))
	msg.Metadata.Set(HeaderPartition, fmt.Sprint(pe.Partition))
	msg.Metadata.Set(HeaderOffset, fmt.Sprint(pe.Offset))
	msg.Metadata.Set(HeaderGeneration, strconv.FormatInt(r.generation, 10))
	msg.Metadata.Set(wmkafka.DefaultKeyMetadata, pe.RunID) // dead letters keep the original key
	if err := r.pub.Publish(r.cfg.Kafka.DeadLetterTopic(), msg); err != nil {
		return fmt.Errorf("dead-letter run %s seq %d: %w", pe.RunID, pe.Seq, err)
	}
	r.log.Error("record dead-lettered; the run's projection is stopped", zap.String("run_id", pe.RunID),
		zap.Int64("seq", pe.Seq), zap.Int32("partition", pe.Partition), zap.Int64("offset", pe.Offset), zap.String("reason", pe.Reason))
	return nil
}
