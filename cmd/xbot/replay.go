package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/infra/kafka"
	pginfra "github.com/xbot-runtime/xbot/infra/postgres"
	chview "github.com/xbot-runtime/xbot/projections/clickhouse"
	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/stack"
)

// runReplay rebuilds one view: `xbot replay --projector NAME [--from-beginning]`.
func runReplay(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("xbot replay", flag.ContinueOnError)
	name := fs.String("projector", "", "the view to rebuild: postgres, clickhouse or im")
	fromBeginning := fs.Bool("from-beginning", false, "empty the view and rebuild it from offset zero (else: catch up from its position)")
	set := config.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !slices.Contains(views, *name) {
		return errors.New("usage: xbot replay --projector postgres|clickhouse|im [--from-beginning]")
	}
	s, err := settingsFrom(set(), "json")
	if err != nil {
		return err
	}
	defer func() { _ = s.log.Sync() }()
	kcfg, err := s.kafka(nil)
	if err != nil {
		return err
	}
	p, closeView, err := s.openView(ctx, *name, kcfg.EventsTopic())
	if err != nil {
		return err
	}
	defer closeView()
	pr := newProgressPrinter(os.Stderr, *name)
	var batches stack.Options
	if err := s.projectorBatches(&batches); err != nil {
		return err
	}
	err = runner.Rebuild(ctx, runner.Config{Kafka: kcfg, Projector: p, Logger: s.log,
		MaxBatch: batches.ProjectorMaxBatch, MaxBatchBytes: batches.ProjectorMaxBatchBytes}, *fromBeginning, pr.report)
	if err != nil {
		return fmt.Errorf("replay %s: %w", *name, err)
	}
	return nil
}

// openView opens the named view's projector.
func (s *settings) openView(ctx context.Context, name, topic string) (runner.Projector, func(), error) {
	switch name {
	case "postgres":
		dsn := s.r.Get("pg_dsn")
		if dsn == "" {
			return nil, nil, errors.New("pg_dsn is required (XBOT_PG_DSN)")
		}
		pool, err := pginfra.Connect(ctx, dsn)
		if err != nil {
			return nil, nil, err
		}
		if err := pginfra.Migrate(ctx, pool, "projection_postgres", pgview.Migrations); err != nil {
			pool.Close()
			return nil, nil, err
		}
		st := pgview.New(pool, s.log.Named("store"), pgview.WithEventsTopic(topic))
		return st, func() { st.Close(); pool.Close() }, nil
	case "clickhouse":
		cfg := s.clickhouse()
		if cfg == nil {
			return nil, nil, errors.New("clickhouse_addr is required (XBOT_CLICKHOUSE_ADDR)")
		}
		kcfg, err := s.kafka(nil)
		if err != nil {
			return nil, nil, err
		}
		n, err := eventPartitions(ctx, kcfg)
		if err != nil {
			return nil, nil, err
		}
		// The rebuilt audit refuses events off their run's partition, as the
		// live one does: a forgery read first cannot become the first writer.
		conn, p, err := stack.OpenClickHouse(ctx, *cfg, s.log.Named("clickhouse"), chview.WithPartitions(n))
		if err != nil {
			return nil, nil, err
		}
		return p, func() { _ = conn.Close() }, nil
	case "im":
		kcfg, err := s.kafka(nil)
		if err != nil {
			return nil, nil, err
		}
		out, p, err := stack.OpenIM(kcfg, s.log.Named("im"))
		if err != nil {
			return nil, nil, err
		}
		return p, out.Close, nil
	}
	return nil, nil, fmt.Errorf("unknown view %q", name)
}

// eventPartitions is the events topic's partition count.
func eventPartitions(ctx context.Context, kcfg kafka.Config) (int, error) {
	cl, err := kafka.NewClient(kcfg)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	return kafka.PartitionCount(ctx, cl, kcfg.WithDefaults().EventsTopic())
}
