package executor

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/profile"
)

// Config configures an Executor.
type Config struct {
	// Kafka is the cluster and topic naming. Required.
	Kafka kafka.Config
	// Group is the executors' consumer group. Default "xbot-executor".
	Group string
	// ID names this instance in logs and events. Default hostname-pid.
	ID string
	// MaxBatch bounds the messages (command batches and appends) folded into
	// one transaction. Default 256: large enough to amortise a commit over
	// many runs, small enough to keep a transaction well under a megabyte.
	MaxBatch int
	// Hooks inject Kafka faults in tests. Nil in production.
	Hooks *kafka.Hooks
}

func (c *Config) setDefaults() {
	if c.Group == "" {
		c.Group = "xbot-executor"
	}
	if c.ID == "" {
		host, _ := os.Hostname()
		c.ID = host + "-" + strconv.Itoa(os.Getpid())
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 256
	}
}

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.MaxBatch < 1 {
		errs = append(errs, errors.New("executor: MaxBatch must be >= 1"))
	}
	return errors.Join(errs...)
}

// Executor owns partitions and drives their runs. It implements kafka.Handler.
type Executor struct {
	cfg      Config
	engine   Engine
	profiles *profile.Catalog
	log      *zap.Logger
	owner    *kafka.Owner

	mu     sync.Mutex
	actors map[int32]*actor
}

// New returns an executor. Nil dependencies are wiring bugs and panic.
func New(cfg Config, engine Engine, profiles *profile.Catalog, log *zap.Logger) (*Executor, error) {
	if engine == nil || profiles == nil || log == nil {
		panic("executor.New: engine, profiles and logger are required")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ex := &Executor{cfg: cfg, engine: engine, profiles: profiles, actors: map[int32]*actor{},
		log: log.With(zap.String("executor_id", cfg.ID))}
	owner, err := kafka.NewOwner(kafka.OwnerConfig{Kafka: cfg.Kafka, Group: cfg.Group, Logger: ex.log, Hooks: cfg.Hooks}, ex)
	if err != nil {
		return nil, err
	}
	ex.owner = owner
	return ex, nil
}

// Run consumes commands and drives runs until ctx is done.
func (ex *Executor) Run(ctx context.Context) error { return ex.owner.Run(ctx) }

// Kill stops the executor as a crash would (tests).
func (ex *Executor) Kill() { ex.owner.Kill() }

// Partitions returns the partitions this executor owns now.
func (ex *Executor) Partitions() []int32 { return ex.owner.Assigned() }

func (ex *Executor) admitOptions() commands.AdmitOptions {
	return commands.AdmitOptions{KnownAgent: ex.profiles.Has}
}

// Commands implements kafka.Handler.
func (ex *Executor) Commands(p int32, recs []kafka.Record) {
	ex.mu.Lock()
	a := ex.actors[p]
	ex.mu.Unlock()
	if a == nil {
		return // not ours any more; the next owner reads them again
	}
	_ = a.submit(a.ctx, commandRecs(recs))
}

// Revoked implements kafka.Handler.
func (ex *Executor) Revoked(p int32) {
	ex.mu.Lock()
	a := ex.actors[p]
	delete(ex.actors, p)
	ex.mu.Unlock()
	if a != nil {
		a.stop()
	}
}
