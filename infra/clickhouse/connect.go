package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Conn is an open connection pool to one database.
type Conn struct {
	driver.Conn
	cfg Config
}

// Config returns the configuration the pool was opened with, defaults set.
func (c *Conn) Config() Config { return c.cfg }

// Connect opens a connection pool to cfg.Database and pings the server once.
// A missing database is an error (see EnsureDatabase). On failure nothing is
// left open.
func Connect(ctx context.Context, cfg Config) (*Conn, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	conn, err := ch.Open(&ch.Options{
		Protocol:        ch.Native,
		Addr:            []string{cfg.Addr},
		Auth:            ch.Auth{Database: cfg.Database, Username: cfg.User, Password: cfg.Password},
		DialTimeout:     cfg.DialTimeout,
		ReadTimeout:     cfg.ReadTimeout,
		MaxOpenConns:    cfg.MaxOpenConns,
		MaxIdleConns:    min(5, cfg.MaxOpenConns),
		ConnMaxLifetime: time.Hour,
	})
	if err != nil {
		return nil, fmt.Errorf("open clickhouse %s: %w", describe(cfg), err)
	}
	ctx, cancel := withDeadline(ctx, cfg.QueryTimeout)
	defer cancel()
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close() // the ping error is what matters
		return nil, fmt.Errorf("ping clickhouse %s: %w", describe(cfg), err)
	}
	return &Conn{Conn: conn, cfg: cfg}, nil
}

// EnsureDatabase creates cfg.Database if it does not exist, connecting to the
// server's "default" database to do so.
func EnsureDatabase(ctx context.Context, cfg Config) error {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return err
	}
	admin, err := Connect(ctx, cfg.WithDatabase("default"))
	if err != nil {
		return err
	}
	defer func() { _ = admin.Close() }()
	if err := admin.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+cfg.Database); err != nil {
		return fmt.Errorf("create database %s: %w", cfg.Database, err)
	}
	return nil
}

// ErrInsertValues is returned by Exec for an INSERT … VALUES statement: over
// the native protocol ClickHouse 18.16 then waits for data blocks the driver
// never sends, so the call would hang until its deadline. Use Insert, or
// INSERT … SELECT.
var ErrInsertValues = errors.New("INSERT … VALUES cannot run through Exec against ClickHouse 18.16; use Insert or INSERT … SELECT")

// Exec runs one statement with the pool's query timeout unless ctx has a
// deadline already. It refuses INSERT … VALUES with ErrInsertValues.
func (c *Conn) Exec(ctx context.Context, query string, args ...any) error {
	if insertValues.MatchString(stripComments(query)) {
		return ErrInsertValues
	}
	ctx, cancel := withDeadline(ctx, c.cfg.QueryTimeout)
	defer cancel()
	return c.Conn.Exec(ctx, query, args...)
}

// insertValues matches an INSERT statement with a VALUES clause.
var insertValues = regexp.MustCompile(`(?is)^INSERT\s+INTO\s+[^\s(]+\s*(\([^)]*\)\s*)?VALUES\b`)

// stripComments removes leading comments of a statement.
func stripComments(query string) string {
	for {
		query = strings.TrimSpace(query)
		if query == "" || query[0] == '\'' || query[0] == '"' || query[0] == '`' {
			return query
		}
		end, err := skipQuotedOrComment(query, 0)
		if err != nil || end == 0 {
			return query
		}
		query = query[end:]
	}
}

// WithTimeout returns ctx with the pool's query timeout unless it has a
// deadline already. Use it around Query and QueryRow, whose rows outlive the
// call and so cannot get a deadline inside it.
func (c *Conn) WithTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return withDeadline(ctx, c.cfg.QueryTimeout)
}

// describe names a server for errors and logs: never the password.
func describe(cfg Config) string {
	return fmt.Sprintf("%s (database %s, user %s)", cfg.Addr, cfg.Database, cfg.User)
}

// withDeadline gives ctx a deadline d from now unless it has one.
func withDeadline(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// Set returns a query argument that binds as a parenthesised list of quoted
// strings, for "x IN ?". (A []string binds as an array, which IN on a String
// column of ClickHouse 18.16 refuses.)
func Set(values []string) any {
	vs := make([]any, len(values))
	for i, v := range values {
		vs[i] = v
	}
	return ch.GroupSet{Value: vs}
}
