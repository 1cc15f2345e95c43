package imgateway

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/coder/websocket"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/projections/im"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// Bounds of what waits in memory for a client: one poll of at most
// pollRecords records, fetched at most fetchBytes at a time. A slow client
// holds the next poll back; nothing else queues.
const (
	pollRecords = 256
	fetchBytes  = 4 << 20
)

// pollBackoff is the pause after a failed poll, so a broker that is away
// is asked once a second rather than in a busy loop.
const pollBackoff = time.Second

// commitTimeout bounds the commit of what a connection delivered once the
// connection is gone.
const commitTimeout = 5 * time.Second

// Group returns the consumer group of an endpoint's outbox position.
func Group(kc kafka.Config, endpoint string) string {
	return kc.Group("im-gateway." + endpoint)
}

// deliver sends the endpoint's outbox messages to the client from the
// endpoint's committed position, once prev (the replaced connection's
// delivery) has ended, until the connection ends.
func (c *conn) deliver(prev <-chan struct{}) {
	defer close(c.delivered)
	select {
	case <-prev:
	case <-c.ctx.Done():
		return
	}
	kc := c.gw.cfg.Kafka.WithDefaults()
	cl, err := kafka.NewClient(kc, kgo.ConsumerGroup(Group(kc, c.ep.Name)), kgo.ConsumeTopics(kc.IMOutboxTopic()),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(fetchBytes), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		c.log.Error("outbox consumer", zap.Error(err))
		c.close(websocket.StatusInternalError, "outbox unavailable")
		return
	}
	defer cl.Close()
	for c.ctx.Err() == nil {
		fs := cl.PollRecords(c.ctx, pollRecords)
		if err := fetchErr(fs); err != nil {
			c.log.Warn("outbox poll", zap.Error(err))
			c.pause(pollBackoff)
			continue
		}
		done, err := c.deliverAll(fs.Records())
		c.commit(cl, done)
		if err != nil {
			return
		}
	}
}

// deliverAll writes the records' frames in order and returns the records
// handled (delivered, or not this client's) before the first write that failed.
func (c *conn) deliverAll(recs []*kgo.Record) ([]*kgo.Record, error) {
	for i, r := range recs {
		if err := c.deliverOne(r); err != nil {
			return recs[:i], err
		}
	}
	return recs, nil
}

// deliverOne writes the frame of r when r is a message of this endpoint
// and of the client's tenant that was not delivered yet.
func (c *conn) deliverOne(r *kgo.Record) error {
	var m im.Message
	if err := json.Unmarshal(r.Value, &m); err != nil {
		c.log.Warn("outbox record not a message", zap.Int32("partition", r.Partition), zap.Int64("offset", r.Offset), zap.Error(err))
		return nil
	}
	conv, ok := wire.ParseSessionID(m.ConversationID)
	if !ok || conv.Endpoint != c.ep.Name || m.TenantID != c.who.TenantID || !c.ep.markSeen(m.ID) {
		return nil
	}
	f := wire.Reply(conv, m)
	f.Content = outbound(f.Content, c.gw.cfg.MediaDir, c.log)
	if err := c.write(f); err != nil {
		c.ep.forget(m.ID)
		return err
	}
	return nil
}

// commit records the position after recs; a failure only means they are
// delivered again, and dropped by id.
func (c *conn) commit(cl *kgo.Client, recs []*kgo.Record) {
	if len(recs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), commitTimeout)
	defer cancel()
	if err := cl.CommitRecords(ctx, recs...); err != nil {
		c.log.Warn("outbox commit", zap.Error(err))
	}
}

// pause waits d or until the connection ends.
func (c *conn) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
}

// fetchErr is the first error of a poll other than the poll's own end.
func fetchErr(fs kgo.Fetches) error {
	var first error
	fs.EachError(func(_ string, _ int32, err error) {
		if first == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, kgo.ErrClientClosed) {
			first = err
		}
	})
	return first
}
