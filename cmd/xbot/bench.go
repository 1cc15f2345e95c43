package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/services/loadtool"
	"github.com/xbot-runtime/xbot/services/stack"
)

// benchDefaults are settings bench picks unless the flag or its variable is
// given: quiet logs, free ports, tools on the local provider in the temp dir,
// and sandbox and stream caps above --concurrency's default (all runs are
// one tenant's and every client follows its run's stream under the one
// token), so that the figures measure the runtime rather than the caps.
var benchDefaults = map[string]string{"log_level": "warn", "api_addr": "127.0.0.1:0",
	"dev_kafka_addr": "127.0.0.1:0", "compute_provider": "local",
	"sandbox_max_per_tenant": "1000", "sandbox_max_total": "1000",
	"api_max_streams": "4096", "api_max_streams_per_principal": "1000", "metrics_addr": "off"}

// runBench runs the load tool against the whole system, started like dev.
func runBench(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("xbot bench", flag.ContinueOnError)
	set := config.BindFlags(fs)
	var o loadtool.Options
	o.BindFlags(fs)
	var h loadtool.HistoryOptions
	h.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if h.Child {
		return loadtool.RunHistoryChild(ctx, os.Stdin, os.Stdout)
	}
	if err := errors.Join(o.Validate(), h.Validate()); err != nil {
		return err
	}
	flags := set()
	for k, v := range benchDefaults {
		key, _ := config.Lookup(k)
		if _, ok := flags[k]; !ok && os.Getenv(key.Env()) == "" {
			flags[k] = v
		}
	}
	s, err := settingsFrom(flags, "console")
	if err != nil {
		return err
	}
	defer func() { _ = s.log.Sync() }()
	dataDir, cleanup, err := devDataDir(s.r.Get("data_dir"))
	if err != nil {
		return err
	}
	defer cleanup()
	d := &devRun{s: s, dataDir: dataDir, keep: s.r.Get("data_dir") != "", out: os.Stderr, noIM: true}
	defer d.stop()
	start := func(ctx context.Context, configure func(*stack.Options) error) (loadtool.System, error) {
		d.tune = configure
		if err := d.start(ctx); err != nil {
			return loadtool.System{}, err
		}
		return loadtool.System{Stack: d.st, Servers: s.servers()}, nil
	}
	if h.Enabled() {
		_, err = loadtool.RunHistory(ctx, o, h, start)
		return err
	}
	_, err = loadtool.Run(ctx, o, start)
	return err
}

// servers says which servers bench embeds and which are external.
func (s *settings) servers() string {
	kind := func(key, embedded string) string {
		if s.r.Get(key) != "" {
			return "external"
		}
		return embedded
	}
	return fmt.Sprintf("kafka %s, postgres %s, clickhouse %s", kind("kafka_brokers", "embedded (kfake)"),
		kind("pg_dsn", "embedded"), kind("clickhouse_addr", "embedded"))
}
