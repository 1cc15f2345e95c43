package devstack_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack"
)

func TestPostgresRefusesConnectionsWithoutThePassword(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pg := start(t, dir)
	if got := queryInt(t, pg.DSN("postgres"), "SELECT 1"); got != 1 {
		t.Fatalf("with the password: SELECT 1 = %d", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for name, dsn := range map[string]string{
		"tcp, no password":    fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port()),
		"tcp, wrong password": fmt.Sprintf("postgres://postgres:guess@127.0.0.1:%d/postgres?sslmode=disable", pg.Port()),
		"socket, no password": fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres", pg.Dir(), pg.Port()),
	} {
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			_ = conn.Close(ctx)
			t.Errorf("%s: connected", name)
		} else if !strings.Contains(err.Error(), "password") {
			t.Errorf("%s: refused for another reason: %v", name, err)
		}
	}
	assertOwnerOnly(t, filepath.Join(pg.Dir(), "superuser.password"))
}

func TestClickHouseRefusesConnectionsWithoutThePassword(t *testing.T) {
	t.Parallel()
	ch := startClickHouse(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for name, pw := range map[string]string{"no password": "", "wrong password": "guess"} {
		conn, err := clickhouse.Connect(ctx, clickhouse.Config{Addr: ch.Addr(), Password: pw})
		if err == nil {
			_ = conn.Close()
			t.Errorf("%s: connected", name)
		}
	}
	conn, err := clickhouse.Connect(ctx, clickhouse.Config{Addr: ch.Addr(), Password: ch.Password()})
	if err != nil {
		t.Fatalf("with the password: %v", err)
	}
	_ = conn.Close()
	users, err := os.ReadFile(filepath.Join(ch.Dir(), "users.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(users), ch.Password()) || !strings.Contains(string(users), "password_sha256_hex") {
		t.Errorf("users.xml must hold only the password's hash:\n%s", users)
	}
	assertOwnerOnly(t, filepath.Join(ch.Dir(), "default.password"))
}

func TestPrivateDirClosesAnOpenDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := devstack.PrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := os.FileMode(0o700)
	if os.Geteuid() == 0 {
		want = 0o711 // the postgres server and the sandbox user may pass through, not list
	}
	if st.Mode().Perm() != want {
		t.Errorf("data dir mode %o, want %o", st.Mode().Perm(), want)
	}
}

// assertOwnerOnly fails unless path is a file only its owner can read.
func assertOwnerOnly(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %o, want 600", path, st.Mode().Perm())
	}
}

// TestTrustClusterIsClosedOnStart restarts a cluster whose pg_hba.conf
// trusts everyone and that has no saved password, as an older version left
// it: the start sets a password, and connections without it are refused.
func TestTrustClusterIsClosedOnStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	pg, err := devstack.StartPostgres(ctx, devstack.PostgresConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	execSQL(t, pg.DSN("postgres"), "CREATE TABLE kept (v int)")
	stop(t, pg)
	hbaPath := filepath.Join(pg.Dir(), "pgdata", "pg_hba.conf")
	hba, err := os.ReadFile(hbaPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hbaPath, []byte(strings.ReplaceAll(string(hba), "scram-sha-256", "trust")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(pg.Dir(), "superuser.password")); err != nil {
		t.Fatal(err)
	}
	pg2 := start(t, dir)
	noPassword := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg2.Port())
	if conn, err := pgx.Connect(ctx, noPassword); err == nil {
		_ = conn.Close(ctx)
		t.Fatal("connected without a password after the restart")
	}
	if got := queryInt(t, pg2.DSN("postgres"), "SELECT count(*) FROM kept"); got != 0 {
		t.Errorf("kept table has %d rows", got)
	}
}
