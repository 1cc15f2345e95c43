package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/metrics"
	pginfra "github.com/xbot-runtime/xbot/infra/postgres"
	"github.com/xbot-runtime/xbot/infra/tracing"
	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/projections/uistream"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/engine/agentloop"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/skills"
	"github.com/xbot-runtime/xbot/services/engine/tools"
	"github.com/xbot-runtime/xbot/services/executor"
)

// Component selects a part of the system.
type Component string

// Components.
const (
	API      Component = "api"
	Executor Component = "executor"
	// ProjectorPostgres is the Postgres read models' projector.
	ProjectorPostgres Component = "projector-postgres"
	// ProjectorClickHouse runs when Options.ClickHouse is set.
	ProjectorClickHouse Component = "projector-clickhouse"
	ProjectorIM         Component = "projector-im"
)

// projectorName is the Postgres projector's name in checkpoints and its group.
const projectorName = pgview.ProjectorName

// heartbeatFresh is how old the projector's last heartbeat may be for
// /healthz to call it up: several heartbeat intervals (2 s), so one slow beat
// does not flap the health check.
const heartbeatFresh = 10 * time.Second

// Options configure a stack.
type Options struct {
	Kafka   kafka.Config
	PGDSN   string
	APIAddr string            // default 127.0.0.1:8080; ":0" style picks a free port
	Tokens  map[string]string // bearer token → principal (api.ParsePrincipal)
	// JWT, APILimits, PublicURL and CORS configure the API (api.Config).
	JWT        api.JWTConfig
	APILimits  api.Limits
	PublicURL  string
	CORS       api.CORSConfig
	Profiles   *profile.Catalog
	ExecutorID string
	// RememberFinished is executor.Config.RememberFinished and
	// api.Config.RememberFinished (0: their default, 7 days).
	RememberFinished     time.Duration
	WaitDefault, WaitMax time.Duration
	// EventPageBytes bounds one events page (api.Config.MaxEventPageBytes).
	EventPageBytes int
	Components     []Component // default: all
	Logger         *zap.Logger
	// ExecutorHooks inject Kafka faults in tests.
	ExecutorHooks *kafka.Hooks
	// StreamAppearWait is api.Config.StreamAppearWait (0: its default).
	StreamAppearWait time.Duration
	// BeforeStreamDelivery, when set, is called before each batch of the
	// API's tail of the events topic is handed over (tests: a tail that
	// lags).
	BeforeStreamDelivery func()
	Version              string
	// LLM is the default model provider (llm_* keys).
	LLM LLM
	// Compute runs tool calls. Required by the executor when a profile has
	// tools that need a sandbox. The stack closes it when it stops, after
	// the executor, if it has a Close (io.Closer).
	Compute compute.Provider
	// Models overrides how profiles resolve to model providers (tests).
	Models agentloop.ModelResolver
	// Tools overrides the tool registry (default: the built-ins).
	Tools *tools.Registry
	// ClickHouse is the audit database; nil runs no ClickHouse projector.
	ClickHouse *chinfra.Config
	// ClickHouseLinger is the audit projector's runner.Config.Linger: an
	// insert costs ClickHouse about the same whatever its size, so the
	// audit gathers events for up to this long (0: DefaultClickHouseLinger;
	// negative: none, each fetch is inserted as it comes).
	ClickHouseLinger time.Duration
	// ProjectorMaxBatch and ProjectorMaxBatchBytes bound every projector's
	// batches (runner.Config.MaxBatch and MaxBatchBytes; 0: their defaults).
	ProjectorMaxBatch, ProjectorMaxBatchBytes int
	// CommandKeys sign the API's commands and verify them in the executor
	// (command_signing_key). Empty generates one for this process, which
	// works only when the API and the executor run in it together.
	CommandKeys commands.KeyRing
	// MCPSecrets are the secrets agents' MCP server headers name
	// (mcp_secrets); the executor puts them in, nothing else sees them.
	MCPSecrets map[string]string
	// Skills is the skill store (skills_dir): the executor resolves and
	// mounts profiles' skills from it, the API lists them. Nil: none.
	Skills *skills.Store
	// MetricsAddr is where the process's /metrics endpoint listens
	// (metrics_addr), on a listener of its own; "" serves none. Port 0
	// picks a free one.
	MetricsAddr string
}

// Stack is a running set of components.
type Stack struct {
	opts Options
	// Projectors are the running projector runners, by view name.
	Projectors map[string]*runner.Runner
	ch         *chinfra.Conn
	outbox     *kafka.Outbox
	stopOnce   sync.Once
	runCtx     context.Context
	hub        *uistream.Hub
	// streamsReady is closed once both tails follow their topics.
	streamsReady chan struct{}
	log          *zap.Logger
	Pool         *pgxpool.Pool
	untrackPool  func()
	Store        *pgview.Store
	Executor     *executor.Executor
	API          *api.API
	server       *http.Server
	addr         string
	producer     *kafka.Producer
	metrics      *metrics.Server
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	errMu        sync.Mutex
	err          error
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
	if opts.CommandKeys.Empty() {
		opts.CommandKeys = commands.GenerateKeyRing()
	}
	s := &Stack{opts: opts, log: opts.Logger}
	if err := s.start(ctx); err != nil {
		s.Stop(context.Background())
		return nil, err
	}
	return s, nil
}

// CommandKeys returns the keys the stack signs and verifies commands with;
// a test that produces commands itself signs them with these.
func (s *Stack) CommandKeys() commands.KeyRing { return s.opts.CommandKeys }

func (s *Stack) start(ctx context.Context) error {
	if err := s.startMetrics(); err != nil {
		return err
	}
	if err := kafka.EnsureTopics(ctx, s.opts.Kafka); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.runCtx = cancel, rctx
	if s.opts.has(API) || s.opts.has(ProjectorPostgres) {
		if err := s.openPostgres(ctx); err != nil {
			return err
		}
	}
	if s.opts.has(Executor) {
		if err := s.startExecutor(rctx); err != nil {
			return err
		}
	}
	if err := s.startProjectors(ctx, rctx); err != nil {
		return err
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
	s.Pool, s.untrackPool = pool, metrics.TrackPool(pool)
	if err := pginfra.Migrate(ctx, pool, "projection_postgres", pgview.Migrations); err != nil {
		return err
	}
	s.Store = pgview.New(pool, s.log.Named("store"), pgview.WithEventsTopic(s.opts.Kafka.WithDefaults().EventsTopic()))
	return nil
}

func (s *Stack) startExecutor(ctx context.Context) error {
	reg := s.opts.Tools
	if reg == nil {
		reg = tools.Builtin(tools.Options{})
	}
	if err := checkProfiles(s.opts.Profiles, reg, s.opts.MCPSecrets); err != nil {
		return err
	}
	s.warnMissingSkills()
	models := s.opts.Models
	if models == nil {
		models = modelResolver(s.opts.LLM)
	}
	cfg := agentloop.Config{Models: models, Tools: reg, Compute: s.opts.Compute, Log: s.log.Named("engine"),
		MCPSecrets: mcp.NewSecrets(s.opts.MCPSecrets), Version: s.opts.Version}
	if s.opts.Skills != nil {
		cfg.Skills = s.opts.Skills
	}
	engine := agentloop.New(cfg)
	ex, err := executor.New(executor.Config{Kafka: s.opts.Kafka, ID: s.opts.ExecutorID, Hooks: s.opts.ExecutorHooks,
		CommandKeys: s.opts.CommandKeys, RememberFinished: s.opts.RememberFinished},
		engine, s.opts.Profiles, s.log.Named("executor"))
	if err != nil {
		return err
	}
	s.Executor = ex
	s.goRun("executor", func() error { return ex.Run(ctx) })
	return nil
}

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

// startStreams gives the API its UI streams: one read_committed tail of the
// events topic per API instance feeds a hub that fans out to every client,
// and the API's command outcomes.
func (s *Stack) startStreams() error {
	log := s.log.Named("streams")
	hub, err := uistream.NewHub(uistream.HubConfig{Logger: log})
	if err != nil {
		return err
	}
	tail, err := kafka.NewTail(kafka.TailConfig{Kafka: s.opts.Kafka, Topic: s.opts.Kafka.WithDefaults().EventsTopic(),
		Deliver: deliverTo(hub, s.API, s.opts.BeforeStreamDelivery), Logger: log})
	if err != nil {
		return err
	}
	cmds, err := kafka.NewTail(kafka.TailConfig{Kafka: s.opts.Kafka, Topic: s.opts.Kafka.WithDefaults().CommandsTopic(),
		Deliver: func(recs []kafka.Record) { s.API.ObserveCommands(recordValues(recs)) }, Logger: log})
	if err != nil {
		return err
	}
	s.hub = hub
	s.API.FollowOutcomes(tail.Ready())
	s.API.UseTailBarrier(tail)
	s.API.FollowCommands(cmds)
	s.goRun("stream tail", func() error { return tail.Run(s.runCtx) })
	s.goRun("commands tail", func() error { return cmds.Run(s.runCtx) })
	s.streamsReady = make(chan struct{})
	go func() {
		for _, ready := range []<-chan struct{}{tail.Ready(), cmds.Ready()} {
			select {
			case <-ready:
			case <-s.runCtx.Done():
				return
			}
		}
		close(s.streamsReady)
	}()
	return s.API.EnableStreams(hub, APIStore(s.Store.Queries), uistream.StreamConfig{})
}

// recordValues returns the values of recs.
func recordValues(recs []kafka.Record) [][]byte {
	out := make([][]byte, len(recs))
	for i, r := range recs {
		out[i] = r.Value
	}
	return out
}

// deliverTo hands each batch of the events topic's tail to hub and to the
// API's command outcomes. The records are decoded only as far as they need,
// and at most once between them.
func deliverTo(hub *uistream.Hub, a *api.API, before func()) func([]kafka.Record) {
	return func(recs []kafka.Record) {
		if before != nil {
			before()
		}
		rs := tailRecords(recs)
		hub.Deliver(rs)
		a.Observe(rs)
	}
}

// tailRecords wraps a tail's batch for its readers, which share the decoding.
func tailRecords(recs []kafka.Record) []*uistream.Record {
	out := make([]*uistream.Record, len(recs))
	for i, r := range recs {
		out[i] = &uistream.Record{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value}
	}
	return out
}

// StreamsReady is closed once the API's tails follow the events and the
// commands topics.
func (s *Stack) StreamsReady() <-chan struct{} { return s.streamsReady }

// Addr returns the API's listen address (host:port).
func (s *Stack) Addr() string { return s.addr }

// Err returns the errors of components that stopped on their own.
func (s *Stack) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Stop stops every component and waits for them. Calling it again does nothing.
func (s *Stack) Stop(ctx context.Context) {
	s.stopOnce.Do(func() { s.stop(ctx) })
}

func (s *Stack) stop(ctx context.Context) {
	if s.server != nil {
		_ = s.server.Shutdown(ctx)
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	if c, ok := s.opts.Compute.(io.Closer); ok {
		if err := c.Close(); err != nil {
			s.log.Warn("closing the compute provider failed", zap.Error(err))
		}
	}
	if s.producer != nil {
		s.producer.Close()
	}
	if s.Store != nil {
		s.Store.Close()
	}
	if s.outbox != nil {
		s.outbox.Close()
	}
	if s.ch != nil {
		_ = s.ch.Close()
	}
	if s.Pool != nil {
		s.untrackPool()
		s.Pool.Close()
	}
	s.stopMetrics(ctx)
}

// commandSender produces validated commands to the commands topic, signed
// so that the executor admits them. Once a command is in the Kafka client's
// buffer, its request's write slot goes back (api.CommandQueued): what is
// left is a wait for brokers elsewhere, which takes none of this process's
// processors. With the brokers in this process (inProcess: the embedded
// kfake) their work is this process's, and the slot is held until the
// acknowledgement (docs/performance.md measures both).
type commandSender struct {
	p         *kafka.Producer
	topic     string
	keys      commands.KeyRing
	inProcess bool
	queued    func(context.Context) // api.CommandQueued
}

// newCommandSender is the sender of commands to the commands topic of kc.
func newCommandSender(p *kafka.Producer, kc kafka.Config, keys commands.KeyRing) commandSender {
	return commandSender{p: p, topic: kc.CommandsTopic(), keys: keys, inProcess: kc.InProcess, queued: api.CommandQueued}
}

func (c commandSender) Send(ctx context.Context, env commands.Envelope) error {
	raw, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("encode command: %w", err)
	}
	ctx, span := tracing.Start(ctx, "command "+string(env.Type), attribute.String("xbot.run_id", env.RunID))
	headers := c.keys.Sign(env.RunID, raw)
	tracing.Inject(ctx, headers) // the executor's engine continues this trace
	if c.inProcess {
		err = c.p.ProduceWithHeaders(ctx, c.topic, env.RunID, raw, headers)
	} else {
		err = c.p.ProduceQueued(ctx, c.topic, env.RunID, raw, headers, func() { c.queued(ctx) })
	}
	tracing.End(span, err)
	return err
}

// agentProfile is the profile of agentID as runs start with it now: the
// executor's (reloaded with agents.yaml) when this stack runs one.
func (s *Stack) agentProfile(agentID string) (profile.Profile, bool) {
	c := s.opts.Profiles
	if s.Executor != nil {
		c = s.Executor.Profiles()
	}
	if c == nil {
		return profile.Profile{}, false
	}
	return c.Get(agentID)
}

func (s *Stack) startAPI() error {
	prod, err := kafka.NewProducer(s.opts.Kafka)
	if err != nil {
		return err
	}
	s.producer = prod
	sender := newCommandSender(prod, s.opts.Kafka, s.opts.CommandKeys)
	a, err := api.New(api.Config{Tokens: s.opts.Tokens, JWT: s.opts.JWT, Limits: s.opts.APILimits,
		PublicURL: s.opts.PublicURL, CORS: s.opts.CORS, WaitDefault: s.opts.WaitDefault, WaitMax: s.opts.WaitMax,
		MaxEventPageBytes: s.opts.EventPageBytes, Version: s.opts.Version, RememberFinished: s.opts.RememberFinished,
		StreamAppearWait: s.opts.StreamAppearWait,
		Partitions:       int(s.opts.Kafka.WithDefaults().Partitions), Agents: s.agentProfile,
		CommandPartitions: func(ctx context.Context) (int, error) {
			return prod.PartitionCount(ctx, s.opts.Kafka.CommandsTopic())
		}}, APIStore(s.Store.Queries), sender, s.healthChecks(), s.log.Named("api"))
	if err != nil {
		return err
	}
	s.API = a
	if err := s.startStreams(); err != nil {
		return err
	}
	a.EnableProjectorLag(s.projectorLag)
	reg := s.opts.Tools
	if reg == nil {
		reg = tools.Builtin(tools.Options{})
	}
	if s.opts.Profiles != nil {
		a.EnableAgents(agentCatalog{profiles: s.opts.Profiles, tools: reg, snapshots: s.Store.Queries, skills: s.opts.Skills,
			log: s.log.Named("agents")})
	}
	addr := s.opts.APIAddr
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		return fmt.Errorf("api: listen on %s: %w", addr, err)
	}
	s.addr = ln.Addr().String()
	s.server, ln = a.Server(ln)
	s.server.RegisterOnShutdown(s.hub.Close) // ends open streams, so shutdown does not wait on them
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
