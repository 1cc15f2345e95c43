package devstack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// trustLine matches an active pg_hba.conf entry whose method is trust
// (the last field; no options follow trust).
var trustLine = regexp.MustCompile(`(?m)^(\s*(?:local|host\w*)\s.*\s)trust\s*$`)

// closeTrust turns a cluster made with trust authentication (by an older
// version) into one that asks for the superuser password: it sets the
// password, switches every trust entry of pg_hba.conf to scram-sha-256 and
// reloads. It runs on every start, so an upgrade interrupted half-way is
// finished by the next one; a cluster without trust entries is left alone.
func (p *Postgres) closeTrust(ctx context.Context) error {
	hbaPath := filepath.Join(p.pgdata, "pg_hba.conf")
	hba, err := os.ReadFile(hbaPath)
	if err != nil {
		return fmt.Errorf("read %s: %w", hbaPath, err)
	}
	if !trustLine.Match(hba) {
		return nil
	}
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("connect to set the superuser password: %w", err)
	}
	defer func() { _ = conn.Close(ctx) }()
	// The password is hex, so quoting it inline is safe; ALTER ROLE takes
	// no parameters.
	if _, err := conn.Exec(ctx, "SET password_encryption = 'scram-sha-256'"); err != nil {
		return fmt.Errorf("set password_encryption: %w", err)
	}
	if _, err := conn.Exec(ctx, "ALTER ROLE postgres PASSWORD '"+p.password+"'"); err != nil {
		return fmt.Errorf("set the superuser password: %w", err)
	}
	closed := trustLine.ReplaceAll(hba, []byte("${1}scram-sha-256"))
	if err := os.WriteFile(hbaPath, closed, 0o600); err != nil { //nolint:gosec // G703: pg_hba.conf of the cluster in the data root xbot manages
		return fmt.Errorf("write %s: %w", hbaPath, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reload pg_hba.conf: %w", err)
	}
	p.logger.Warn("devstack: the postgres cluster trusted every local user; it now requires the generated password",
		zap.String("dir", p.dir))
	return nil
}
