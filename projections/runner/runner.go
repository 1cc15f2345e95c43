package runner

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/kafka"
)

// Config configures a projector.
type Config struct {
	// Kafka is the cluster. Required.
	Kafka kafka.Config
	// Name of the projector, e.g. "postgres"; its consumer group is
	// "xbot-projector-<Name>". Required.
	Name string
	// Apply writes a batch and its checkpoint atomically and idempotently. Required.
	Apply func(ctx context.Context, recs []kafka.Record) error
	// Checkpoints returns the next offset per partition. Required.
	Checkpoints func(ctx context.Context) (map[int32]int64, error)
	// Heartbeat, when set, is called every HeartbeatEvery so readers can
	// tell the projector is alive.
	Heartbeat      func(ctx context.Context) error
	HeartbeatEvery time.Duration // default 2 s
	// Logger is required.
	Logger *zap.Logger
}

// Group returns the projector's consumer group name.
func (c Config) Group() string { return "xbot-projector-" + c.Name }

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Name == "" || c.Apply == nil || c.Checkpoints == nil || c.Logger == nil {
		errs = append(errs, errors.New("projector: Name, Apply, Checkpoints and Logger are required"))
	}
	return errors.Join(errs...)
}

// Run projects until ctx is done.
func Run(ctx context.Context, cfg Config) error {
	if cfg.HeartbeatEvery == 0 {
		cfg.HeartbeatEvery = 2 * time.Second
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	log := cfg.Logger.With(zap.String("projector", cfg.Name))
	if cfg.Heartbeat != nil {
		go heartbeat(ctx, cfg, log)
	}
	return kafka.RunConsumer(ctx, kafka.ConsumerConfig{
		Kafka: cfg.Kafka, Group: cfg.Group(), Topic: cfg.Kafka.EventsTopic(),
		Checkpoints: cfg.Checkpoints, Apply: cfg.Apply, Logger: log,
	})
}

func heartbeat(ctx context.Context, cfg Config, log *zap.Logger) {
	t := time.NewTicker(cfg.HeartbeatEvery)
	defer t.Stop()
	for {
		if err := cfg.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			log.Warn("projector heartbeat failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
