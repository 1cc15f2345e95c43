package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/services/stack"
)

// benchFlags are the load's shape and where its report goes.
type benchFlags struct {
	runs, concurrency, turns, toolCalls int
	modelLatency, timeout               time.Duration
	tool, toolCommand                   string
	jsonPath, markdownPath              string
	cpuProfile                          string
}

func (f *benchFlags) bind(fs *flag.FlagSet) {
	fs.IntVar(&f.runs, "runs", 500, "runs to create")
	fs.IntVar(&f.concurrency, "concurrency", 100, "concurrent clients, each creating a run and following its stream")
	fs.IntVar(&f.turns, "turns", 3, "model turns that call tools, before the final answer")
	fs.IntVar(&f.toolCalls, "tool-calls", 1, "tool calls per turn")
	fs.DurationVar(&f.modelLatency, "model-latency", 20*time.Millisecond, "scripted model latency per turn")
	fs.StringVar(&f.tool, "tool", "shell", "tool the turns call: shell (runs --tool-command in the sandbox) or none")
	fs.StringVar(&f.toolCommand, "tool-command", "true", "command the shell tool runs")
	fs.StringVar(&f.jsonPath, "json", "", "write the JSON report here (default: stdout)")
	fs.StringVar(&f.markdownPath, "markdown", "", "replace the xbot bench section of this markdown file with the table")
	fs.DurationVar(&f.timeout, "timeout", 15*time.Minute, "give up after this long")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole process during the load to this file (go tool pprof)")
}

func (f *benchFlags) validate() error {
	var errs []error
	if f.runs < 1 || f.concurrency < 1 || f.turns < 0 || f.toolCalls < 0 || f.modelLatency < 0 {
		errs = append(errs, errors.New("--runs and --concurrency must be >= 1; --turns, --tool-calls, --model-latency >= 0"))
	}
	if f.tool != "shell" && f.tool != "none" {
		errs = append(errs, fmt.Errorf("--tool %q: want shell or none", f.tool))
	}
	return errors.Join(errs...)
}

// benchDefaults are settings bench picks unless the flag or its variable is
// given: quiet logs, free ports, tools on the local provider in the temp dir,
// and sandbox caps above --concurrency's default (all runs are one tenant's),
// so that the figures measure the runtime rather than the caps.
var benchDefaults = map[string]string{"log_level": "warn", "api_addr": "127.0.0.1:0",
	"dev_kafka_addr": "127.0.0.1:0", "compute_provider": "local",
	"sandbox_max_per_tenant": "1000", "sandbox_max_total": "1000"}

// runBench starts the whole system like dev, drives the load and reports.
func runBench(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("xbot bench", flag.ContinueOnError)
	set := config.BindFlags(fs)
	var bf benchFlags
	bf.bind(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := bf.validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, bf.timeout)
	defer cancel()
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
	return benchSystem(ctx, s, bf)
}

func benchSystem(ctx context.Context, s *settings, bf benchFlags) error {
	dataDir, cleanup, err := devDataDir(s.r.Get("data_dir"))
	if err != nil {
		return err
	}
	defer cleanup()
	b := &bench{flags: bf, s: s, token: benchToken(), nonce: benchToken()[4:12]}
	d := &devRun{s: s, dataDir: dataDir, keep: s.r.Get("data_dir") != "", out: os.Stderr, tune: b.tune}
	defer d.stop()
	if err := d.start(ctx); err != nil {
		return err
	}
	b.st = d.st
	rep, runErr := b.run(ctx)
	if rep == nil {
		return runErr
	}
	return errors.Join(runErr, b.write(rep))
}

// tune registers the bench agent and token and remembers the servers.
func (b *bench) tune(o *stack.Options) error {
	cat, err := o.Profiles.With(b.profile())
	if err != nil {
		return err
	}
	o.Profiles = cat
	tokens := map[string]string{b.token: benchTenant}
	for k, v := range o.Tokens {
		tokens[k] = v
	}
	o.Tokens = tokens
	o.WaitMax = max(o.WaitMax, acceptWait)
	b.opts = *o
	return nil
}

func benchToken() string {
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	return "xbb_" + hex.EncodeToString(raw[:])
}

// write puts the JSON report in --json or on stdout, and the table in --markdown.
func (b *bench) write(rep *benchReport) error {
	var w io.Writer = os.Stdout
	if b.flags.jsonPath != "" {
		f, err := os.Create(b.flags.jsonPath)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		w = f
	}
	if err := rep.writeJSON(w); err != nil {
		return err
	}
	table := rep.markdown()
	fmt.Fprint(os.Stderr, "\n"+table)
	if b.flags.markdownPath == "" {
		return nil
	}
	return replaceSection(b.flags.markdownPath, table)
}
