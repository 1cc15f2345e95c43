package devstack_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/xbot-runtime/xbot/infra/devstack"
)

func TestStartStopLeavesNoProcess(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "root") // parents are created
	pg := start(t, dir)
	if pg.Port() <= 0 {
		t.Fatalf("Port() = %d", pg.Port())
	}
	if got := queryInt(t, pg.DSN("postgres"), "SELECT current_setting('max_connections')::int"); got != 200 {
		t.Errorf("max_connections = %d, want 200", got)
	}
	if serverProcesses(t, dir) == "" {
		t.Fatal("pgrep finds no server process while running")
	}
	stop(t, pg)
	if left := serverProcesses(t, dir); left != "" {
		t.Fatalf("processes left after Stop: %s", left)
	}
	if err := pg.Stop(context.Background()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestStopWithCancelledContextKills(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pg := start(t, dir)
	execSQL(t, pg.DSN("postgres"), "SELECT 1") // a backend has come and gone
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := pg.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if left := serverProcesses(t, dir); left != "" {
		t.Fatalf("processes left after a forced Stop: %s", left)
	}
}

func TestRestartKeepsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pg := start(t, dir)
	execSQL(t, pg.DSN("postgres"), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)")
	stop(t, pg)

	pg = start(t, dir)
	if got := queryInt(t, pg.DSN("postgres"), "SELECT v FROM kept"); got != 42 {
		t.Fatalf("after restart v = %d, want 42", got)
	}
}

func TestRestartAfterUncleanStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := start(t, dir)
	// synchronous_commit is off: only a synchronous commit is sure to have
	// reached the WAL before the kill.
	execSQL(t, old.DSN("postgres"), "SET synchronous_commit = on; CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)")
	pidFile := filepath.Join(old.Dir(), "pgdata", "postmaster.pid")
	// Kill the postmaster alone: its children may still hold the shared
	// memory when the next start begins, and postmaster.pid stays behind.
	if err := syscall.Kill(postmasterPID(t, pidFile), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	pg := start(t, dir)
	if got := queryInt(t, pg.DSN("postgres"), "SELECT v FROM kept"); got != 7 {
		t.Fatalf("after unclean stop v = %d, want 7", got)
	}
	stop(t, old) // must not touch the new server on the same directory
	if got := queryInt(t, pg.DSN("postgres"), "SELECT v FROM kept"); got != 7 {
		t.Fatalf("new server broken by stopping the old one: v = %d", got)
	}
}

func TestRestartWithStalePIDOfLiveProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pg := start(t, dir)
	stop(t, pg)
	// After an unclean stop the PID in postmaster.pid may belong to an
	// unrelated live process; PostgreSQL alone would refuse to start.
	pidFile := filepath.Join(pg.Dir(), "pgdata", "postmaster.pid")
	content := strconv.Itoa(os.Getpid()) + "\n" + pg.Dir() + "/pgdata\n"
	if err := os.WriteFile(pidFile, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	start(t, dir)
}

func TestStartFailureIncludesLogTail(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err = devstack.StartPostgres(ctx, devstack.PostgresConfig{Dir: dir, Port: port})
	if err == nil {
		t.Fatal("start on a taken port succeeded")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "could not bind") {
		t.Errorf("error lacks the server log tail: %v", err)
	}
	if left := serverProcesses(t, dir); left != "" {
		t.Fatalf("processes left after failed start: %s", left)
	}
}

func TestCreateDatabase(t *testing.T) {
	t.Parallel()
	pg := start(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	dsn, err := pg.CreateDatabase(ctx, `My-App "DB"`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(dsn, "/my_app__db_?sslmode=disable") {
		t.Errorf("DSN %q does not name the sanitised database", dsn)
	}
	execSQL(t, dsn, "CREATE TABLE t (v int)")
	if _, err := pg.CreateDatabase(ctx, `My-App "DB"`); err != nil {
		t.Errorf("creating an existing database: %v", err)
	}
	if got := queryInt(t, dsn, "SELECT count(*) FROM t"); got != 0 {
		t.Errorf("existing database was replaced")
	}
	if err := pg.DropDatabase(ctx, `My-App "DB"`); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, pg.DSN("postgres"), "SELECT count(*) FROM pg_database WHERE datname = 'my_app__db_'"); n != 0 {
		t.Errorf("database still exists after DropDatabase")
	}
	if _, err := pg.CreateDatabase(ctx, "--"); err == nil {
		t.Error("CreateDatabase accepted a name without letters or digits")
	}
}

func TestMissingBinaries(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	_, err := devstack.StartPostgres(context.Background(), devstack.PostgresConfig{Dir: t.TempDir(), BinDir: empty})
	if !errors.Is(err, devstack.ErrPostgresMissing) {
		t.Fatalf("err = %v, want ErrPostgresMissing", err)
	}
	for _, want := range []string{empty, "apt-get install -y postgresql"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	err := devstack.PostgresConfig{Port: -1, BinDir: "relative"}.Validate()
	for _, want := range []string{"Dir is required", "Port -1", "must be absolute"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

// TestFreePort is not parallel: servers of parallel tests may take the port.
func TestFreePort(t *testing.T) {
	port, err := devstack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("free port %d cannot be bound: %v", port, err)
	}
	_ = l.Close()
}

// postmasterPID reads the PID on the first line of postmaster.pid.
func postmasterPID(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
