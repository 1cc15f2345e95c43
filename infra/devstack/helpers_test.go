package devstack_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/infra/devstack"
)

// testTimeout bounds every server operation of a test.
const testTimeout = time.Minute

// start starts a server on dir and stops it when the test ends.
func start(t *testing.T, dir string) *devstack.Postgres {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	pg, err := devstack.StartPostgres(ctx, devstack.PostgresConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(t, pg) })
	return pg
}

func stop(t *testing.T, pg *devstack.Postgres) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := pg.Stop(ctx); err != nil {
		t.Error(err)
	}
}

// exec runs sql on dsn.
func execSQL(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// queryInt returns the single integer sql yields on dsn.
func queryInt(t *testing.T, dsn, sql string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	var n int
	if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// serverProcesses describes the processes of the server on dir: those
// pgrep -f finds by the data directory on their command line (the
// postmaster) and those working in it (every server process, Linux only).
func serverProcesses(t *testing.T, dir string) string {
	t.Helper()
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	pgdata := filepath.Join(resolved, "pgdata")
	out, err := exec.Command("pgrep", "-f", "--", pgdata).Output()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) { // 1: no match
		t.Fatalf("pgrep: %v", err)
	}
	found := strings.Fields(string(out))
	cwds, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, cwd := range cwds {
		if target, err := os.Readlink(cwd); err == nil && target == pgdata {
			found = append(found, strings.Split(cwd, "/")[2]+"(cwd)")
		}
	}
	return strings.Join(found, " ")
}

// startHelper runs this test binary again with only test name and
// envName=dir, and returns once the helper printed "ready" (it has started
// its server); the caller kills it.
func startHelper(t *testing.T, name, envName, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$")
	cmd.Env = append(os.Environ(), envName+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "ready") {
		_ = cmd.Process.Kill()
		t.Fatalf("helper did not start its server: %q, %v", line, err)
	}
	return cmd
}
