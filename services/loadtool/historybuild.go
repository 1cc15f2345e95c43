package loadtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// HistoryBuilderConfig configures a HistoryBuilder.
type HistoryBuilderConfig struct {
	// Kafka is the system's cluster and topic naming. Required.
	Kafka kafka.Config
	// CommandKeys sign the creates; the executor must verify with the same
	// keys (stack.Stack.CommandKeys). Required.
	CommandKeys commands.KeyRing
	// TenantID and AgentID are whose runs the history holds; the agent must
	// be configured in the executor's profiles. Required.
	TenantID, AgentID string
	// Window bounds the runs submitted and not ended yet. Default 512.
	Window int
	// SandboxKeys is how many sandbox keys the runs spread over (a key's
	// runs run one at a time). Default 1024.
	SandboxKeys int
	// Logger is required.
	Logger *zap.Logger
	// Progress, if set, is called every half second while Grow runs and once
	// when it ends: the events counted when Grow began and now, its target.
	Progress func(from, events, target int64, elapsed time.Duration, finished bool)
}

func (c *HistoryBuilderConfig) setDefaults() {
	if c.Window == 0 {
		c.Window = 512
	}
	if c.SandboxKeys == 0 {
		c.SandboxKeys = 1024
	}
}

// Validate reports every configuration problem.
func (c HistoryBuilderConfig) Validate() error {
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.CommandKeys.Empty() || c.TenantID == "" || c.AgentID == "" || c.Logger == nil {
		errs = append(errs, errors.New("history builder: CommandKeys, TenantID, AgentID and Logger are required"))
	}
	if c.Window < 0 || c.SandboxKeys < 0 {
		errs = append(errs, errors.New("history builder: Window and SandboxKeys must be >= 0"))
	}
	return errors.Join(errs...)
}

// HistoryBuilder grows the log of a running system with real runs. It
// produces signed CreateRun commands straight to the commands topic, as the
// API's command sender does, so the executor admits, runs and records them
// exactly as it does the API's: the history holds whatever the executor
// writes. It follows the events topic from the moment it starts, and counts
// what it sees there. The system's executors are the caller's: the builder
// only submits and waits.
type HistoryBuilder struct {
	cfg        HistoryBuilderConfig
	cl         *kgo.Client
	w          *watch
	partitions int
	nonce      string
	next       atomic.Int64
	stop       context.CancelFunc
	done       chan error
	produceMu  sync.Mutex
	produceErr error
}

// NewHistoryBuilder connects to the cluster and starts following the events
// topic; it returns once the events committed from now on will be counted.
func NewHistoryBuilder(ctx context.Context, cfg HistoryBuilderConfig) (*HistoryBuilder, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cl, err := kafka.NewClient(cfg.Kafka, kgo.ProducerLinger(2*time.Millisecond))
	if err != nil {
		return nil, err
	}
	n, err := kafka.PartitionCount(ctx, cl, cfg.Kafka.CommandsTopic())
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("history builder: %w", err)
	}
	w, err := newWatch(cfg.Kafka, cfg.Logger.Named("history-watch"))
	if err != nil {
		cl.Close()
		return nil, err
	}
	wctx, stop := context.WithCancel(context.Background())
	b := &HistoryBuilder{cfg: cfg, cl: cl, w: w, partitions: n, nonce: newToken()[4:12], stop: stop,
		done: make(chan error, 1)}
	go func() { b.done <- w.run(wctx) }()
	select {
	case <-w.tail.Ready():
		return b, nil
	case err := <-b.done:
		stop()
		cl.Close()
		return nil, fmt.Errorf("history builder: following the events topic: %w", err)
	case <-ctx.Done():
		b.Close()
		return nil, ctx.Err()
	}
}

// Close stops following the log and closes the client.
func (b *HistoryBuilder) Close() {
	b.stop()
	if err := <-b.done; err != nil {
		b.cfg.Logger.Warn("history builder: following the events topic failed", zap.Error(err))
	}
	b.cl.Close()
}

// Partitions is the commands topic's partition count.
func (b *HistoryBuilder) Partitions() int { return b.partitions }

// Events returns how many events were committed since the builder started.
func (b *HistoryBuilder) Events() int64 {
	evs, _, _ := b.w.counts()
	return evs
}

// Runs returns how many runs ended since the builder started, and how many
// of them ended other than completed.
func (b *HistoryBuilder) Runs() (ended, notCompleted int64) {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return int64(len(b.w.ended)), b.w.failed
}

// Submit produces n creates and returns their run ids without waiting for
// the runs. Each create has its own idempotency key; the runs spread over
// SandboxKeys sandbox keys. Once a record could not be produced, Submit
// returns that error, now and every time after.
func (b *HistoryBuilder) Submit(ctx context.Context, n int) ([]string, error) {
	ids := make([]string, 0, n)
	recs := make([]*kgo.Record, 0, n)
	for range n {
		rec, id, err := b.create(b.next.Add(1))
		if err != nil {
			return nil, err
		}
		ids, recs = append(ids, id), append(recs, rec)
	}
	b.w.track(ids...)
	for _, rec := range recs {
		b.cl.Produce(ctx, rec, b.produced)
	}
	if err := b.cl.Flush(ctx); err != nil {
		return nil, fmt.Errorf("history builder: flush: %w", err)
	}
	b.produceMu.Lock()
	defer b.produceMu.Unlock()
	return ids, b.produceErr
}

func (b *HistoryBuilder) produced(r *kgo.Record, err error) {
	if err == nil {
		return
	}
	b.produceMu.Lock()
	defer b.produceMu.Unlock()
	if b.produceErr == nil {
		b.produceErr = fmt.Errorf("history builder: produce to %s: %w", r.Topic, err)
	}
}

// create builds the signed record of the i-th create.
func (b *HistoryBuilder) create(i int64) (*kgo.Record, string, error) {
	c := b.cfg
	key := fmt.Sprintf("history-%s-%d", b.nonce, i)
	sk := events.SandboxKey{TenantID: c.TenantID, WorkspaceID: fmt.Sprintf("history-%d", i%int64(c.SandboxKeys)),
		AgentID: c.AgentID, OwnerID: "history"}
	env, err := commands.New(commands.CreateRun, commands.Header{
		RunID: commands.RunIDFor(c.TenantID, key, sk, b.partitions), PlatformSessionID: events.NewID("sess"),
		TenantID: c.TenantID, Actor: events.Actor{Type: "user", ID: "history"}, IdempotencyKey: key,
	}, commands.CreateRunPayload{AgentID: c.AgentID, Input: events.UserInput{Content: "history"}, SandboxKey: sk})
	if err != nil {
		return nil, "", err
	}
	rec, err := b.record(env)
	return rec, env.RunID, err
}

// record validates, encodes and signs a command as the API's sender does.
func (b *HistoryBuilder) record(env commands.Envelope) (*kgo.Record, error) {
	if _, err := env.Validate(); err != nil {
		return nil, fmt.Errorf("history builder: %w", err)
	}
	raw, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("history builder: encode command: %w", err)
	}
	rec := &kgo.Record{Topic: b.cfg.Kafka.CommandsTopic(), Key: []byte(env.RunID), Value: raw}
	for k, v := range b.cfg.CommandKeys.Sign(env.RunID, raw) {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	return rec, nil
}

// send produces commands and waits for the broker's acknowledgement.
func (b *HistoryBuilder) send(ctx context.Context, envs ...commands.Envelope) error {
	recs := make([]*kgo.Record, len(envs))
	for i, env := range envs {
		rec, err := b.record(env)
		if err != nil {
			return err
		}
		recs[i] = rec
	}
	if err := b.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("history builder: produce: %w", err)
	}
	return nil
}

// AwaitEnded waits until every run of ids has ended (any terminal status).
func (b *HistoryBuilder) AwaitEnded(ctx context.Context, ids []string) error {
	return b.w.until(ctx, func() bool {
		for _, id := range ids {
			if _, ok := b.w.ended[id]; !ok {
				return false
			}
		}
		return true
	})
}

// Ended returns how each run of ids ended so far ("" for a run that has
// not ended).
func (b *HistoryBuilder) Ended(ids []string) map[string]events.Type {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	out := make(map[string]events.Type, len(ids))
	for _, id := range ids {
		out[id] = b.w.ended[id].status
	}
	return out
}
