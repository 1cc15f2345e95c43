package executor

import (
	"errors"
	"fmt"
	"strconv"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
)

// Dead-letter reasons of command records the executor refuses. Each record
// goes to the dead-letter topic unchanged (key and value), with the reason
// in headers; nothing is appended to any run's log on its word.
const (
	// ReasonUnauthenticated: no valid signature of a configured key.
	ReasonUnauthenticated = "unauthenticated"
	// ReasonUndecodable: the value is not a command envelope.
	ReasonUndecodable = "undecodable"
	// ReasonInvalid: the envelope fails schema validation.
	ReasonInvalid = "invalid"
	// ReasonMisrouted: the record's key is not its runId, or it is not on
	// the partition partition.For(runId) names, so this executor does not own
	// the run.
	ReasonMisrouted = "misrouted"
)

// Dead-letter headers of a refused command record, beside the projectors'
// reason_poisoned (a readable sentence).
const (
	HeaderDeadLetterReason  = "xbot-dead-letter-reason"
	HeaderSource            = "xbot-source"
	HeaderSourceTopic       = "xbot-source-topic"
	HeaderSourcePartition   = "xbot-source-partition"
	HeaderSourceOffset      = "xbot-source-offset"
	HeaderRecordKey         = "xbot-record-key"
	HeaderRunID             = "xbot-run-id"
	HeaderCommandID         = "xbot-command-id"
	HeaderExpectedPartition = "xbot-expected-partition"
	headerReasonPoisoned    = "reason_poisoned"
)

// refusal of a command record: why, and what is known of it.
type deadLetter struct {
	reason, detail string
	runID, cmdID   string
	expected       int32 // -1 unless misrouted
}

// screen admits only records that an API or executor signed, that decode and
// validate, and whose run this partition owns. Any other record is
// dead-lettered and screen returns ok=false.
func (b *batch) screen(rec kafka.Record) (commands.Envelope, any, bool) {
	if err := b.w.ex.cfg.CommandKeys.Verify(rec.Key, rec.Value, rec.Headers); err != nil {
		b.deadLetter(rec, deadLetter{reason: ReasonUnauthenticated, detail: err.Error(), expected: -1})
		return commands.Envelope{}, nil, false
	}
	c, payload, err := commands.Decode(rec.Value)
	var ve *commands.ValidationError
	switch {
	case errors.As(err, &ve):
		b.deadLetter(rec, deadLetter{reason: ReasonInvalid, detail: ve.Error(), runID: c.RunID, cmdID: c.CommandID, expected: -1})
		return c, nil, false
	case err != nil:
		b.deadLetter(rec, deadLetter{reason: ReasonUndecodable, detail: err.Error(), expected: -1})
		return c, nil, false
	}
	n := b.w.part.Partitions()
	home := partition.For(c.RunID, max(n, 1))
	if rec.Key != c.RunID || home != rec.Partition {
		b.deadLetter(rec, deadLetter{reason: ReasonMisrouted, runID: c.RunID, cmdID: c.CommandID, expected: home,
			detail: fmt.Sprintf("record key %q, runId %s belongs on partition %d, record is on partition %d", rec.Key, c.RunID, home, rec.Partition)})
		return c, nil, false
	}
	return c, payload, true
}

// deadLetter sends rec to the dead-letter topic in this batch's transaction,
// so its offset commits with the batch and it is never admitted.
func (b *batch) deadLetter(rec kafka.Record, d deadLetter) {
	h := map[string]string{
		headerReasonPoisoned: d.reason + ": " + d.detail, HeaderDeadLetterReason: d.reason,
		HeaderSource: "executor", HeaderSourceTopic: b.w.ex.cfg.Kafka.CommandsTopic(),
		HeaderSourcePartition: strconv.Itoa(int(rec.Partition)), HeaderSourceOffset: strconv.FormatInt(rec.Offset, 10),
		HeaderRecordKey: rec.Key,
	}
	if d.runID != "" {
		h[HeaderRunID] = d.runID
	}
	if d.cmdID != "" {
		h[HeaderCommandID] = d.cmdID
	}
	if d.expected >= 0 {
		h[HeaderExpectedPartition] = strconv.Itoa(int(d.expected))
	}
	b.w.log.Warn("command record dead-lettered", zap.String("reason", d.reason), zap.Int64("offset", rec.Offset),
		zap.String("run_id", d.runID), zap.String("command_id", d.cmdID))
	b.recs = append(b.recs, kafka.OutRecord{Topic: b.w.ex.cfg.Kafka.DeadLetterTopic(), Key: rec.Key, Value: rec.Value, Headers: h})
}
