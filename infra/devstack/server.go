package devstack

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/zap"
)

// stopTimeout is how long Stop waits for a fast shutdown before SIGKILL;
// a throwaway server with fsync off shuts down in well under a second.
const stopTimeout = 10 * time.Second

// maxIdentifier is PostgreSQL's NAMEDATALEN-1: longer names are truncated.
const maxIdentifier = 63

// duplicateDatabase is the SQLSTATE of CREATE DATABASE on an existing name.
const duplicateDatabase = "42P04"

// DSN returns a URL DSN for database db as superuser postgres over TCP,
// password included: treat it as a secret (postgres.RedactDSN for logs).
func (p *Postgres) DSN(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("postgres", p.password),
		Host: fmt.Sprintf("127.0.0.1:%d", p.port), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// Port returns the TCP port the server listens on at 127.0.0.1.
func (p *Postgres) Port() int { return p.port }

// Dir returns the data root (absolute, symlinks resolved).
func (p *Postgres) Dir() string { return p.dir }

// CreateDatabase creates database name, sanitised to a valid unquoted
// identifier (lowercase letters, digits and _, at most 63 bytes, not starting
// with a digit), and returns its DSN. An existing database is kept as it is.
func (p *Postgres) CreateDatabase(ctx context.Context, name string) (string, error) {
	db, err := sanitizeDatabase(name)
	if err != nil {
		return "", err
	}
	sql := "CREATE DATABASE " + pgx.Identifier{db}.Sanitize()
	if p.version >= 150000 {
		// Copying files is ~3x faster than the WAL_LOG default of PostgreSQL
		// 15 for a small template, and its checkpoint is cheap with fsync off.
		sql += " STRATEGY = FILE_COPY"
	}
	err = p.admin(ctx, sql)
	var pgErr *pgconn.PgError
	if err != nil && (!errors.As(err, &pgErr) || pgErr.Code != duplicateDatabase) {
		return "", fmt.Errorf("create database %s: %w", db, err)
	}
	return p.DSN(db), nil
}

// DropDatabase drops database name (sanitised like CreateDatabase). On
// PostgreSQL 13 and later its open sessions are disconnected first; before,
// open sessions make it fail. A missing database is not an error.
func (p *Postgres) DropDatabase(ctx context.Context, name string) error {
	db, err := sanitizeDatabase(name)
	if err != nil {
		return err
	}
	sql := "DROP DATABASE IF EXISTS " + pgx.Identifier{db}.Sanitize()
	if p.version >= 130000 {
		sql += " WITH (FORCE)" // disconnect sessions a test left open
	}
	if err := p.admin(ctx, sql); err != nil {
		return fmt.Errorf("drop database %s: %w", db, err)
	}
	return nil
}

// admin runs one statement on the postgres database.
func (p *Postgres) admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	_, err = conn.Exec(ctx, sql)
	return errors.Join(err, conn.Close(ctx))
}

// sanitizeDatabase maps name to a valid unquoted identifier.
func sanitizeDatabase(name string) (string, error) {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	db := b.String()
	if strings.Trim(db, "_") == "" {
		return "", fmt.Errorf("database name %q has no letters or digits", name)
	}
	if db[0] >= '0' && db[0] <= '9' {
		db = "d_" + db
	}
	return db[:min(len(db), maxIdentifier)], nil
}

// Stop shuts the server down: SIGINT (fast shutdown: sessions are
// disconnected, data is kept), then SIGKILL to all of its processes if it
// has not exited within 10 s or when ctx ends. It returns once no process of
// the server is left; it is safe to call more than once. Committed data
// survives a fast shutdown. After SIGKILL the next start runs crash recovery
// and, as synchronous_commit is off, may miss commits of the last second.
func (p *Postgres) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(ctx) })
	return p.stopErr
}

func (p *Postgres) stop(ctx context.Context) error {
	defer func() { _ = p.log.Close() }() // the child holds its own descriptor
	// A fast shutdown ends the children before the postmaster; the wait
	// for leftovers only matters when the postmaster died some other way.
	err := p.proc.shutdown(ctx, syscall.SIGINT, p.ownedDataDir(), func() {
		p.logger.Warn("devstack: postgres ignored fast shutdown; killing", zap.String("dir", p.dir))
	})
	if err != nil {
		return fmt.Errorf("stop postgres in %s: %w", p.dir, err)
	}
	p.logger.Info("devstack: postgres stopped", zap.String("dir", p.dir), zap.NamedError("exit", p.proc.err))
	return nil
}

// ownedDataDir returns pgdata, used to find the server's processes by their
// working directory, or "" (find none that way) when postmaster.pid names a
// live process other than ours: after our server died, another one may have
// been started on the same directory, and its processes are not ours to end.
func (p *Postgres) ownedDataDir() string {
	pid, err := pidFromFile(filepath.Join(p.pgdata, "postmaster.pid"))
	if err == nil && pid != p.proc.cmd.Process.Pid && processAlive(pid) {
		return ""
	}
	return p.pgdata
}
