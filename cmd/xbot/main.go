// Command xbot is the event-sourced agent runtime: one binary whose
// subcommands run the whole system locally (dev) or each component on its own
// against external Kafka and PostgreSQL (api, executor, projector, migrate).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
	"github.com/xbot-runtime/xbot/services/stack"
)

// views are the projectors' names.
var views = events.Views()

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `xbot — event-sourced agent runtime

Usage:
  xbot dev [flags]                 run everything in one process on embedded Kafka and PostgreSQL
                                   (--kafka apache: on a local Apache Kafka broker instead of kfake)
  xbot api [flags]                 HTTP API (needs kafka_brokers, pg_dsn)
  xbot executor [flags]            run executor (needs kafka_brokers); run several for scale
  xbot projector postgres [flags]  Postgres read-model projector (needs kafka_brokers, pg_dsn)
  xbot projector clickhouse        ClickHouse audit projector (needs kafka_brokers, clickhouse_addr)
  xbot projector im                IM view projector → xbot.im.outbox.v1 (needs kafka_brokers)
  xbot im-gateway [flags]          sandbox IM gateway: WebSocket endpoints and chat page on im_addr, a client of
                                   the API at im_api_url (needs kafka_brokers; SIGHUP re-reads im_endpoints)
  xbot replay --projector postgres|clickhouse|im [--from-beginning]
                                   rebuild a view up to the log's current end, with progress (stop that projector first)
  xbot bench [--runs 500 --concurrency 100 --turns 3 --tool-calls 1 --model-latency 20ms --json F --markdown F]
                                   load test the whole system in process (embedded servers like dev) next to raw baselines
  xbot conformance --api URL --token TOKEN [--other-token T] [--suite api|runtime-client|all]
                                   run the API and runtime client conformance suites against a live API,
                                   one line per check; exits non-zero on any failure (--print-agents: the
                                   agents file they need). It creates runs in the token's tenant, which stay
                                   in its history: use a tenant kept for checks
  xbot migrate [flags]             create topics and apply Postgres migrations, then exit
  xbot skill add <dir|archive>     add a skill version to the skill store (skills_dir); SKILL.md names it
  xbot skill list                  list the skill store's versions
  xbot config explain [flags]      show every setting, its value, layer and variable (secrets redacted)
  xbot provider install|list|verify|remove
                                   compute provider plugins (EPP/1): install from a directory or git URL with
                                   consent, list, verify their files, remove (docs/providers.md)
  xbot openapi [--spec 3.1|3.0] [--out FILE]
                                   print the API's OpenAPI document (what /openapi.json serves), for client generators
  xbot version

Every setting can be given as a flag (--kafka-brokers), an environment variable
(XBOT_KAFKA_BROKERS), in ./.env, ~/.xbot/.env or ~/.xbot/config.toml (kafka_brokers).
Run "xbot <command> -h" for the flags.
`

func main() {
	stack.TuneGC()
	if err := run(os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "xbot:", err)
		}
		if errors.Is(err, plugin.ErrConsent) {
			os.Exit(2) // unattended and no consent: a usage problem, not a failure
		}
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("a command is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "dev":
		return runDev(ctx, rest)
	case "api", "executor", "migrate":
		return runSplit(ctx, cmd, rest)
	case "projector":
		if len(rest) == 0 || !slices.Contains(views, rest[0]) {
			return errors.New("usage: xbot projector postgres|clickhouse|im [flags]")
		}
		return runSplit(ctx, "projector "+rest[0], rest[1:])
	case "im-gateway":
		return runIMGateway(ctx, rest)
	case "replay":
		return runReplay(ctx, rest)
	case "skill":
		return runSkill(rest, os.Stdout)
	case "bench":
		return runBench(ctx, rest)
	case "conformance":
		return runConformance(ctx, rest, os.Stdout)
	case "config":
		if len(rest) == 0 || rest[0] != "explain" {
			return errors.New("usage: xbot config explain [flags]")
		}
		return runExplain(rest[1:])
	case "provider":
		return runProvider(ctx, rest, stdConsole())
	case "openapi":
		return runOpenAPI(rest)
	case "version", "--version":
		fmt.Println("xbot", version)
		return nil
	case "help", "-h", "--help":
		fmt.Print(usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
