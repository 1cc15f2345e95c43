package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/infra/kafka"
	pginfra "github.com/xbot-runtime/xbot/infra/postgres"
	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/compute"
	"github.com/xbot-runtime/xbot/services/executor"
	"github.com/xbot-runtime/xbot/services/executor/agentloop"
	"github.com/xbot-runtime/xbot/services/profile"
	"github.com/xbot-runtime/xbot/services/tools"
)

// Component selects a part of the system.
type Component string

// Components.
const (
	API       Component = "api"
	Executor  Component = "executor"
	Projector Component = "projector-postgres"
)

// projectorName is the Postgres projector's name in checkpoints and its group.
const projectorName = "postgres"

// heartbeatFresh is how old the projector's last heartbeat may be for
// /healthz to call it up: several heartbeat intervals (2 s), so one slow beat
// does not flap the health check.
const heartbeatFresh = 10 * time.Second

// Options configure a stack.
type Options struct {
	Kafka                kafka.Config
	PGDSN                string
	APIAddr              string            // default 127.0.0.1:8080; ":0" style picks a free port
	Tokens               map[string]string // bearer token → tenant
	Profiles             *profile.Catalog
	ExecutorID           string
	WaitDefault, WaitMax time.Duration
	Components           []Component // default: all
	Logger               *zap.Logger
	// ExecutorHooks inject Kafka faults in tests.
	ExecutorHooks *kafka.Hooks
	Version       string
	// LLM is the default model provider (llm_* keys).
	LLM LLM
	// Compute runs tool calls. Required by the executor when a profile has
	// tools that need a sandbox.
	Compute compute.Provider
	// Models overrides how profiles resolve to model providers (tests).
	Models agentloop.ModelResolver
	// Tools overrides the tool registry (default: the built-ins).
	Tools *tools.Registry
}

// Stack is a running set of components.
type Stack struct {
	opts     Options
	log      *zap.Logger
	Pool     *pgxpool.Pool
	Store    *pgview.Store
	Executor *executor.Executor
	API      *api.API
	server   *http.Server
	addr     string
	producer *kafka.Producer
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	errMu    sync.Mutex
	err      error
}

func (o Options) has(c Component) bool {
	if len(o.Components) == 0 {
		return true
	}
	for _, x := range o.Components {
		if x == c {
			return true
		}
	}
	return false
}

// Start creates topics, migrates Postgres and starts the selected components.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if opts.Logger == nil || opts.Profiles == nil {
		panic("stack.Start: Logger and Profiles are required")
	}
	s := &Stack{opts: opts, log: opts.Logger}
	if err := s.start(ctx); err != nil {
		s.Stop(context.Background())
		return nil, err
	}
	return s, nil
}

func (s *Stack) start(ctx context.Context) error {
	if err := kafka.EnsureTopics(ctx, s.opts.Kafka); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if s.opts.has(API) || s.opts.has(Projector) {
		if err := s.openPostgres(ctx); err != nil {
			return err
		}
	}
	if s.opts.has(Executor) {
		if err := s.startExecutor(rctx); err != nil {
			return err
		}
	}
	if s.opts.has(Projector) {
		if err := s.startProjector(rctx); err != nil {
			return err
		}
	}
	if s.opts.has(API) {
		return s.startAPI()
	}
	return nil
}

func (s *Stack) openPostgres(ctx context.Context) error {
	if s.opts.PGDSN == "" {
		return errors.New("pg_dsn is required for the API and the projector")
	}
	pool, err := pginfra.Connect(ctx, s.opts.PGDSN)
	if err != nil {
		return err
	}
	s.Pool = pool
	if err := pginfra.Migrate(ctx, pool, "projection_postgres", pgview.Migrations); err != nil {
		return err
	}
	s.Store = pgview.New(pool, s.log.Named("store"))
	return nil
}

func (s *Stack) startExecutor(ctx context.Context) error {
	reg := s.opts.Tools
	if reg == nil {
		reg = tools.Builtin(tools.Options{})
	}
	if err := checkProfiles(s.opts.Profiles, reg); err != nil {
		return err
	}
	models := s.opts.Models
	if models == nil {
		models = modelResolver(s.opts.LLM)
	}
	engine := agentloop.New(agentloop.Config{Models: models, Tools: reg, Compute: s.opts.Compute, Log: s.log.Named("engine")})
	ex, err := executor.New(executor.Config{Kafka: s.opts.Kafka, ID: s.opts.ExecutorID, Hooks: s.opts.ExecutorHooks},
		engine, s.opts.Profiles, s.log.Named("executor"))
	if err != nil {
		return err
	}
	s.Executor = ex
	s.goRun("executor", func() error { return ex.Run(ctx) })
	return nil
}

// checkProfiles refuses to start with a profile naming a tool that does not
// exist: better now than as a failed run later.
func checkProfiles(c *profile.Catalog, reg *tools.Registry) error {
	var errs []error
	for _, id := range c.IDs() {
		p, _ := c.Get(id)
		if _, err := reg.Specs(p.Tools); err != nil {
			errs = append(errs, fmt.Errorf("agent %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Stack) startProjector(ctx context.Context) error {
	instance := s.opts.ExecutorID
	if instance == "" {
		instance = "projector"
	}
	r, err := runner.New(ctx, runner.Config{
		Kafka: s.opts.Kafka, Projector: pgProjector{s.Store, s.opts.Kafka.EventsTopic()}, Logger: s.log.Named("projector"),
		Heartbeat: func(ctx context.Context) error { return s.Store.Heartbeat(ctx, projectorName, instance) },
	})
	if err != nil {
		return err
	}
	s.goRun("projector", func() error { return r.Run(ctx) })
	return nil
}

// pgProjector adapts the Postgres store to the runner.
type pgProjector struct {
	store *pgview.Store
	topic string
}

func (p pgProjector) Name() string { return projectorName }

func (p pgProjector) Apply(ctx context.Context, batch []runner.Record) error {
	rows := make([]pgview.Record, len(batch))
	for i, r := range batch {
		rows[i] = pgview.Record{Partition: r.Partition, Offset: r.Offset, Value: r.Value}
	}
	return p.store.ApplyBatch(ctx, projectorName, p.topic, rows)
}

func (p pgProjector) Checkpoints(ctx context.Context) (map[int32]int64, error) {
	return p.store.Checkpoints(ctx, projectorName, p.topic)
}

func (p pgProjector) Reset(context.Context) error { return errors.New("reset: not implemented yet") }


func (s *Stack) goRun(name string, fn func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := fn(); err != nil {
			s.log.Error(name+" stopped", zap.Error(err))
			s.errMu.Lock()
			s.err = errors.Join(s.err, fmt.Errorf("%s: %w", name, err))
			s.errMu.Unlock()
		}
	}()
}

// Addr returns the API's listen address (host:port).
func (s *Stack) Addr() string { return s.addr }

// Err returns the errors of components that stopped on their own.
func (s *Stack) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Stop stops every component and waits for them.
func (s *Stack) Stop(ctx context.Context) {
	if s.server != nil {
		_ = s.server.Shutdown(ctx)
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	if s.producer != nil {
		s.producer.Close()
	}
	if s.Store != nil {
		s.Store.Close()
	}
	if s.Pool != nil {
		s.Pool.Close()
	}
}

// commandSender produces validated commands to the commands topic.
type commandSender struct {
	p     *kafka.Producer
	topic string
}

func (c commandSender) Send(ctx context.Context, env commands.Envelope) error {
	raw, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("encode command: %w", err)
	}
	return c.p.Produce(ctx, c.topic, env.RunID, raw)
}

func (s *Stack) startAPI() error {
	prod, err := kafka.NewProducer(s.opts.Kafka)
	if err != nil {
		return err
	}
	s.producer = prod
	a, err := api.New(api.Config{Tokens: s.opts.Tokens, WaitDefault: s.opts.WaitDefault, WaitMax: s.opts.WaitMax,
		Version: s.opts.Version}, s.Store, commandSender{p: prod, topic: s.opts.Kafka.CommandsTopic()},
		s.healthChecks(), s.log.Named("api"))
	if err != nil {
		return err
	}
	s.API = a
	addr := s.opts.APIAddr
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		return fmt.Errorf("api: listen on %s: %w", addr, err)
	}
	s.addr = ln.Addr().String()
	s.server = &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.goRun("api", func() error {
		if err := s.server.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}

func (s *Stack) healthChecks() []api.HealthCheck {
	return []api.HealthCheck{
		{Name: "kafka", Check: s.producer.Ping},
		{Name: "postgres", Check: s.Pool.Ping},
		{Name: "projector", Check: func(ctx context.Context) error {
			beat, err := s.Store.LastHeartbeat(ctx, projectorName)
			if err != nil {
				return err
			}
			if age := time.Since(beat); age > heartbeatFresh {
				return fmt.Errorf("no projector heartbeat for %s", age.Round(time.Second))
			}
			return nil
		}},
	}
}

// Healthy runs every health check once and joins the failures.
func (s *Stack) Healthy(ctx context.Context) error {
	var errs []error
	for _, c := range s.healthChecks() {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if err := c.Check(cctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
		}
		cancel()
	}
	return errors.Join(errs...)
}
