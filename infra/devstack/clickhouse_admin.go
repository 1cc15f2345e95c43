package devstack

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// ping checks that the server on the HTTP port is this one (by the dev_dir
// macro of its configuration: a picked port may have been taken by another
// server meanwhile) and that the native port accepts connections.
func (c *ClickHouse) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	got, err := c.Query(ctx, "SELECT substitution FROM system.macros WHERE macro = 'dev_dir'")
	if err != nil {
		return err
	}
	if strings.TrimSpace(got) != c.dir {
		return fmt.Errorf("port %d is served by another clickhouse (dev_dir %q)", c.httpPort, strings.TrimSpace(got))
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", c.Addr())
	if err != nil {
		return fmt.Errorf("native port: %w", err)
	}
	_ = conn.Close() // only reachability was checked
	version, err := c.Query(ctx, "SELECT version()")
	if err != nil {
		return err
	}
	c.version = strings.TrimSpace(version)
	return nil
}

// maxAnswer caps what Query reads: it is meant for small admin answers.
const maxAnswer = 1 << 20

// Query runs one statement over the HTTP interface and returns the answer as
// text (TabSeparated). It is meant for administration and tests; use the
// native protocol (infra/clickhouse) for data.
func (c *ClickHouse) Query(ctx context.Context, sql string) (string, error) {
	u := "http://127.0.0.1:" + strconv.Itoa(c.httpPort) + "/"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(sql))
	if err != nil {
		return "", fmt.Errorf("clickhouse query: %w", err)
	}
	// No keep-alive: an idle connection makes the server wait for it on
	// shutdown until its keep-alive timeout.
	req.Close = true
	req.SetBasicAuth("default", c.password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("clickhouse query: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return "", fmt.Errorf("clickhouse query: read answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("clickhouse query %q: %s: %s", sql, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// CreateDatabase creates database name, sanitised to letters, digits and _
// (at most 63 bytes, not starting with a digit), and returns the name. An
// existing database is kept as it is.
func (c *ClickHouse) CreateDatabase(ctx context.Context, name string) (string, error) {
	db, err := sanitizeDatabase(name)
	if err != nil {
		return "", err
	}
	if _, err := c.Query(ctx, "CREATE DATABASE IF NOT EXISTS "+db); err != nil {
		return "", fmt.Errorf("create database %s: %w", db, err)
	}
	return db, nil
}

// DropDatabase drops database name (sanitised like CreateDatabase) with its
// tables. A missing database is not an error.
func (c *ClickHouse) DropDatabase(ctx context.Context, name string) error {
	db, err := sanitizeDatabase(name)
	if err != nil {
		return err
	}
	if _, err := c.Query(ctx, "DROP DATABASE IF EXISTS "+db); err != nil {
		return fmt.Errorf("drop database %s: %w", db, err)
	}
	return nil
}
