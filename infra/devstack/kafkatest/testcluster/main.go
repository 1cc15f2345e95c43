// Command testcluster runs a command beside one Apache Kafka cluster for
// tests. It starts three KRaft nodes (devstack.StartApacheKafka, replication
// factor 3, min.insync.replicas 2), runs the command with
// XBOT_TEST_KAFKA=apache and XBOT_TEST_KAFKA_BROKERS naming the brokers, so
// that every test binary the command starts uses this cluster instead of
// starting its own, and stops the cluster when the command ends. It exits
// with the command's status; when that is not 0 it keeps the brokers' logs
// and says where.
//
//	go run ./infra/devstack/kafkatest/testcluster -- go test -race ./...
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
)

// startTimeout bounds the cluster's start: ~10 s on an idle 2-core machine,
// several times that on a loaded one.
const startTimeout = 5 * time.Minute

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: testcluster -- command [args...]")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "xbot-testcluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcluster:", err)
		return 1
	}
	code := runBeside(ctx, dir, args)
	if code == 0 {
		_ = os.RemoveAll(dir) // a leftover temp dir is no failure
	} else {
		fmt.Fprintf(os.Stderr, "testcluster: the brokers' logs are kept in %s/node-*/kafka.log\n", dir)
	}
	return code
}

// runBeside starts the cluster in dir, runs args and stops the cluster.
func runBeside(ctx context.Context, dir string, args []string) int {
	started := time.Now()
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	k, err := devstack.StartApacheKafka(sctx, devstack.ApacheKafkaConfig{Dir: dir, Brokers: 3})
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcluster:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "testcluster: Apache Kafka %s, 3 brokers at %s, ready in %s\n",
		k.Version(), strings.Join(k.Addrs(), ","), time.Since(started).Round(time.Millisecond))
	code := command(ctx, k.Addrs(), args)
	if err := k.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "testcluster:", err)
		code = max(code, 1)
	}
	return code
}

// command runs args with the cluster's environment and returns its exit
// status. A signal to testcluster is passed on to the command.
func command(ctx context.Context, addrs, args []string) int {
	cmd := exec.Command(args[0], args[1:]...) //nolint:gosec,noctx // running the caller's command is the point; ctx ends it by a signal below
	cmd.Env = append(os.Environ(), kafkatest.BrokerEnv+"="+kafkatest.Apache,
		kafkatest.BrokersEnv+"="+strings.Join(addrs, ","))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testcluster:", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitCode(err)
	case <-ctx.Done():
		_ = cmd.Process.Signal(syscall.SIGTERM) // it may have exited just now
		return exitCode(<-done)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "testcluster:", err)
	return 1
}
