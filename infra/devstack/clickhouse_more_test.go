package devstack_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
)

func TestClickHouseMissingBinary(t *testing.T) {
	t.Parallel()
	_, err := devstack.StartClickHouse(context.Background(), devstack.ClickHouseConfig{
		Dir: t.TempDir(), Binary: "/nonexistent/clickhouse-server"})
	if !errors.Is(err, devstack.ErrClickHouseMissing) {
		t.Fatalf("err = %v, want ErrClickHouseMissing", err)
	}
	if !strings.Contains(err.Error(), "apt-get install -y clickhouse-server") {
		t.Errorf("error does not name the package: %v", err)
	}
}

func TestClickHouseConfigValidate(t *testing.T) {
	t.Parallel()
	err := devstack.ClickHouseConfig{TCPPort: 70000, HTTPPort: -1, Binary: "relative"}.Validate()
	for _, want := range []string{"Dir is required", "TCPPort 70000", "HTTPPort -1", "must be absolute"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

// A fixed port that is taken fails the start with the server's own error.
func TestClickHouseFixedPortTaken(t *testing.T) {
	t.Parallel()
	requireClickHouse(t)
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	ch, err := devstack.StartClickHouse(ctx, devstack.ClickHouseConfig{Dir: t.TempDir(), TCPPort: port})
	if err == nil {
		_ = ch.Stop(ctx)
		t.Fatal("started on a taken port")
	}
	if !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("error does not carry the server's reason: %v", err)
	}
}

// requireClickHouse skips t when no ClickHouse binary is installed, unless
// CI is set: then the test runs and fails loudly.
func requireClickHouse(t *testing.T) {
	t.Helper()
	if inCI() {
		return
	}
	for _, p := range []string{"/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server", "/usr/bin/clickhouse"} {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	if _, err := exec.LookPath("clickhouse-server"); err != nil {
		t.Skip(devstack.ErrClickHouseMissing)
	}
}

// chHelperDirEnv makes the test binary act as a caller that starts a
// ClickHouse server and then waits to be killed.
const chHelperDirEnv = "DEVSTACK_TEST_CH_HELPER_DIR"

func TestClickHouseDiesWithCaller(t *testing.T) {
	if dir := os.Getenv(chHelperDirEnv); dir != "" {
		runClickHouseHelper(dir)
		return
	}
	t.Parallel()
	requireClickHouse(t)
	dir := t.TempDir()
	cmd := startHelper(t, "TestClickHouseDiesWithCaller", chHelperDirEnv, dir)
	if len(processesIn(t, dir)) == 0 {
		t.Fatal("no server process while the helper runs")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no cleanup code runs
		t.Fatal(err)
	}
	_ = cmd.Wait()
	eventually.Holds(t, 30*time.Second, "clickhouse of a killed caller to exit", func() bool {
		return len(processesIn(t, dir)) == 0
	})
}

// runClickHouseHelper starts a server on dir, reports it and blocks until killed.
func runClickHouseHelper(dir string) {
	if _, err := devstack.StartClickHouse(context.Background(), devstack.ClickHouseConfig{Dir: dir}); err != nil {
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("ready\n")
	select {}
}

// processesIn returns the live processes whose working directory is dir.
func processesIn(t *testing.T, dir string) []int {
	t.Helper()
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	var pids []int
	for _, cwd := range cwds {
		target, err := os.Readlink(cwd)
		if err != nil || target != resolved {
			continue
		}
		pidDir := filepath.Dir(cwd)
		if stat, err := os.ReadFile(filepath.Join(pidDir, "stat")); err == nil && zombie(string(stat)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(pidDir)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombie reports whether a /proc/PID/stat line is of a dead process.
func zombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	f := strings.Fields(stat[i+1:])
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}
