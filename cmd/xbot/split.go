package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/infra/kafka"
	pginfra "github.com/xbot-runtime/xbot/infra/postgres"
	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/services/stack"
)

// runSplit runs one component against external Kafka and PostgreSQL.
func runSplit(ctx context.Context, name string, args []string) error {
	s, err := load(name, args, "json")
	if err != nil {
		return err
	}
	defer func() { _ = s.log.Sync() }()
	kcfg, err := s.kafka(nil)
	if err != nil {
		return err
	}
	warnOpenKafka(s.log, kcfg.Security)
	if name == "migrate" {
		return migrate(ctx, s, kcfg)
	}
	stopTracing, err := startTracing(ctx, s.log, "xbot-"+strings.ReplaceAll(name, " ", "-"))
	if err != nil {
		return err
	}
	defer stopTracing()
	s.runsExecutor = name == "executor"
	s.needsCommandKey = name == "executor" || name == "api"
	opts, err := s.stackOptions(kcfg, "")
	if err != nil {
		return err
	}
	opts.Components = map[string][]stack.Component{
		"api": {stack.API}, "executor": {stack.Executor}, "projector postgres": {stack.ProjectorPostgres},
		"projector clickhouse": {stack.ProjectorClickHouse}, "projector im": {stack.ProjectorIM},
	}[name]
	st, err := stack.Start(ctx, opts)
	if err != nil {
		return err
	}
	s.log.Info("xbot "+name+" running", zap.String("api", st.Addr()), zap.String("metrics", st.MetricsAddr()),
		zap.Strings("kafka", kcfg.Brokers))
	if st.Executor != nil {
		go s.reloadProfilesOnHangup(ctx, st)
	}
	<-ctx.Done()
	s.log.Info("xbot " + name + " stopping")
	st.Stop(context.Background())
	return st.Err()
}

func (s *settings) stackOptions(kcfg kafka.Config, dataDir string) (stack.Options, error) {
	tokens, err := config.ParseTokens(s.r.Get("api_tokens"))
	if err != nil {
		return stack.Options{}, err
	}
	llm, profiles, err := s.profiles()
	if err != nil {
		return stack.Options{}, err
	}
	wait, maxWait, err := s.waits()
	if err != nil {
		return stack.Options{}, err
	}
	keys, err := s.commandKeys()
	if err != nil {
		return stack.Options{}, err
	}
	pageBytes, err := s.r.Int("events_page_max_bytes")
	if err != nil {
		return stack.Options{}, err
	}
	remember, err := s.r.Duration("executor_remember_finished")
	if err != nil {
		return stack.Options{}, err
	}
	opts := stack.Options{EventPageBytes: pageBytes, Kafka: kcfg, PGDSN: s.r.Get("pg_dsn"), APIAddr: s.r.Get("api_addr"),
		Tokens:   tokens,
		Profiles: profiles, ExecutorID: s.r.Get("executor_id"), RememberFinished: remember, WaitDefault: wait, WaitMax: maxWait,
		Logger: s.log, Version: version, LLM: llm, ClickHouse: s.clickhouse(), CommandKeys: keys, MetricsAddr: s.metricsAddr()}
	if err := s.apiAccess(&opts); err != nil {
		return stack.Options{}, err
	}
	if err := s.projectorBatches(&opts); err != nil {
		return stack.Options{}, err
	}
	if opts.Skills, err = s.skillStore(); err != nil {
		return stack.Options{}, err
	}
	if s.runsExecutor {
		if opts.Compute, err = s.computeProvider(dataDir); err != nil {
			return stack.Options{}, err
		}
		if opts.MCPSecrets, err = s.mcpSecrets(); err != nil {
			return stack.Options{}, err
		}
	}
	return opts, nil
}

func migrate(ctx context.Context, s *settings, kcfg kafka.Config) error {
	if err := kafka.EnsureTopics(ctx, kcfg); err != nil {
		return err
	}
	warnings, err := kafka.CheckTopics(ctx, kcfg)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "xbot migrate: warning:", w)
	}
	dsn := s.r.Get("pg_dsn")
	if dsn == "" {
		return errors.New("pg_dsn is required (XBOT_PG_DSN)")
	}
	pool, err := pginfra.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := pginfra.Migrate(ctx, pool, "projection_postgres", pgview.Migrations); err != nil {
		return err
	}
	if cfg := s.clickhouse(); cfg != nil {
		conn, _, err := stack.OpenClickHouse(ctx, *cfg, s.log)
		if err != nil {
			return err
		}
		_ = conn.Close()
	}
	fmt.Println("xbot migrate: topics and migrations are up to date")
	return nil
}

// metricsAddr is metrics_addr, "" when it is off (or empty).
func (s *settings) metricsAddr() string {
	if addr := s.r.Get("metrics_addr"); addr != "off" {
		return addr
	}
	return ""
}

// clickhouse returns the audit database's configuration, nil when
// clickhouse_addr is unset.
func (s *settings) clickhouse() *chinfra.Config {
	addr := s.r.Get("clickhouse_addr")
	if addr == "" {
		return nil
	}
	return &chinfra.Config{Addr: addr, Database: s.r.Get("clickhouse_database"),
		User: s.r.Get("clickhouse_user"), Password: s.r.Get("clickhouse_password")}
}

// reloadProfilesOnHangup re-reads agents_file on SIGHUP. Runs that already
// started keep their capability snapshot; runs that start later use the new
// profiles. A file that does not load is reported and the old profiles stay.
func (s *settings) reloadProfilesOnHangup(ctx context.Context, st *stack.Stack) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		_, profiles, err := s.profiles()
		if err != nil {
			s.log.Error("agent profiles not reloaded; the previous ones stay in force", zap.Error(err))
			continue
		}
		st.Executor.SetProfiles(profiles)
		s.log.Info("agent profiles reloaded; runs that start from now on use them", zap.Strings("agents", profiles.IDs()))
	}
}

// warnOpenKafka warns when a component outside dev talks to Kafka without
// both SASL and TLS: Kafka is inside xbot's trust boundary.
func warnOpenKafka(log *zap.Logger, sec kafka.Security) {
	if sec.SASLMechanism != "" && sec.TLS {
		return
	}
	log.Warn("the Kafka connection is not authenticated and encrypted (kafka_sasl_mechanism, kafka_tls): "+
		"whoever can reach the brokers can forge commands and read every tenant's events",
		zap.Bool("sasl", sec.SASLMechanism != ""), zap.Bool("tls", sec.TLS))
}

// commandKeys reads command_signing_key. A split API or executor refuses to
// start without it: the two processes must share the key, and an executor
// that admitted unsigned commands would obey anyone who reaches the broker.
// Unset elsewhere (xbot dev) leaves the stack to generate one.
func (s *settings) commandKeys() (commands.KeyRing, error) {
	v := s.r.Get("command_signing_key")
	if v == "" {
		if s.needsCommandKey {
			return commands.KeyRing{}, errors.New("command_signing_key is required (XBOT_COMMAND_SIGNING_KEY): " +
				"the same id:base64secret on the API and every executor, e.g. k1:$(head -c 32 /dev/urandom | base64)")
		}
		return commands.KeyRing{}, nil
	}
	return commands.ParseKeyRing(v)
}
