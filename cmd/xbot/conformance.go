package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/xbot-runtime/xbot/contracttests"
)

// conformanceSuites are the suites xbot conformance runs, by --suite name.
var conformanceSuites = map[string]func(contracttests.Target) contracttests.Suite{
	"api":            contracttests.APISuite,
	"runtime-client": contracttests.RuntimeClientSuite,
}

// runConformance runs the conformance suites against a live API, printing
// each check and its result; it fails when a check fails.
func runConformance(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("xbot conformance", flag.ContinueOnError)
	var target contracttests.Target
	fs.StringVar(&target.BaseURL, "api", "", "the API's base URL, e.g. http://127.0.0.1:8080 (required)")
	fs.StringVar(&target.Token, "token", os.Getenv("XBOT_TOKEN"), "a bearer token with scope full (default $XBOT_TOKEN); the suites create runs in its tenant")
	fs.StringVar(&target.OtherToken, "other-token", "", "a token of another tenant, for the tenant checks (without it they are N/A)")
	fs.DurationVar(&target.CheckTimeout, "check-timeout", 3*time.Minute, "bound of one check")
	suite := fs.String("suite", "all", "which suite: api, runtime-client or all")
	printAgents := fs.Bool("print-agents", false, "print the agents file the suites need and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *printAgents {
		_, err := io.WriteString(out, contracttests.ConformanceAgentsYAML)
		return err
	}
	names, err := suiteNames(*suite)
	if err != nil {
		return err
	}
	if target.BaseURL == "" || target.Token == "" {
		return errors.New("xbot conformance: --api and --token are required")
	}
	return conformance(ctx, target, names, out)
}

func suiteNames(s string) ([]string, error) {
	if s == "all" {
		return []string{"api", "runtime-client"}, nil
	}
	if _, ok := conformanceSuites[s]; !ok {
		return nil, fmt.Errorf("xbot conformance: unknown suite %q (api, runtime-client or all)", s)
	}
	return []string{s}, nil
}

// conformance runs the named suites one after the other and sums up.
func conformance(ctx context.Context, target contracttests.Target, names []string, out io.Writer) error {
	counts := map[string]int{}
	for _, name := range names {
		_, _ = fmt.Fprintf(out, "== %s suite against %s\n", name, target.BaseURL)
		for _, r := range conformanceSuites[name](target).Run(ctx, out) {
			counts[r.Status()]++
		}
	}
	_, _ = fmt.Fprintf(out, "== %d passed, %d failed, %d not applicable\n", counts["PASS"], counts["FAIL"], counts["N/A"])
	if counts["FAIL"] > 0 {
		return fmt.Errorf("conformance: %d checks failed", counts["FAIL"])
	}
	return nil
}
