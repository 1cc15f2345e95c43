package postgres

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Connect opens a connection pool for dsn (URL or keyword/value form) and
// pings the server once. On failure the pool is closed and the returned error
// names the redacted DSN; the password never appears in the error text, even
// when a lower layer (URL parsing, the driver) echoes it.
func Connect(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, redactErr(fmt.Errorf("parse postgres dsn: %w", err), dsnSecrets(dsn)...)
	}
	secret := append(dsnSecrets(dsn), cfg.ConnConfig.Password)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, redactErr(fmt.Errorf("open postgres pool %s: %w", RedactDSN(dsn), err), secret...)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, redactErr(fmt.Errorf("ping postgres %s: %w", RedactDSN(dsn), err), secret...)
	}
	return pool, nil
}

// redactedError replaces every occurrence of the secrets in the text of the
// error it wraps while keeping the chain intact for errors.Is and errors.As.
type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		msg = strings.ReplaceAll(msg, s, redactedMark)
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }

// redactErr wraps err so its message contains none of the non-empty secrets.
// Longer secrets are replaced first so a secret that contains another is
// scrubbed whole.
func redactErr(err error, secrets ...string) error {
	keep := secrets[:0]
	for _, s := range secrets {
		if s != "" {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return err
	}
	sort.Slice(keep, func(i, j int) bool { return len(keep[i]) > len(keep[j]) })
	return &redactedError{err: err, secrets: keep}
}
