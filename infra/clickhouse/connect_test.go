package clickhouse_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack/chtest"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cases := map[string]clickhouse.Config{
		"no addr":        {},
		"not host:port":  {Addr: "localhost"},
		"bad database":   {Addr: "127.0.0.1:9000", Database: "a-b"},
		"negative":       {Addr: "127.0.0.1:9000", ReadTimeout: -1},
		"negative conns": {Addr: "127.0.0.1:9000", MaxOpenConns: -1},
	}
	for name, cfg := range cases {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: Validate() = nil", name)
		}
	}
	if err := (clickhouse.Config{Addr: "127.0.0.1:9000", Database: "audit_1"}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}

func TestConnectErrorsNameServerNotPassword(t *testing.T) {
	t.Parallel()
	cfg := chtest.NewDatabase(t)
	cfg.Password = "s3cret-pa55"
	_, err := clickhouse.Connect(context.Background(), cfg)
	if err == nil {
		t.Fatal("Connect with a wrong password succeeded")
	}
	if strings.Contains(err.Error(), cfg.Password) || !strings.Contains(err.Error(), cfg.Addr) {
		t.Errorf("error %q must name %s and not the password", err, cfg.Addr)
	}
}

func TestEnsureDatabase(t *testing.T) {
	t.Parallel()
	cfg := chtest.NewDatabase(t)
	cfg.Database += "_extra"
	t.Cleanup(func() {
		_, _ = chtest.Shared(t).Query(context.Background(), "DROP DATABASE IF EXISTS "+cfg.Database)
	})
	if _, err := clickhouse.Connect(context.Background(), cfg); err == nil {
		t.Fatal("Connect to a missing database succeeded")
	}
	for range 2 {
		if err := clickhouse.EnsureDatabase(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := clickhouse.Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
}

func TestExecRefusesInsertValues(t *testing.T) {
	t.Parallel()
	conn := newConn(t)
	for _, q := range []string{
		"INSERT INTO t VALUES (1)",
		"-- note\n insert into t (a, b) values (1, 2)",
		"/* c */ INSERT INTO db.t(a) VALUES (1)",
	} {
		if err := conn.Exec(context.Background(), q); !errors.Is(err, clickhouse.ErrInsertValues) {
			t.Errorf("%q: err = %v, want ErrInsertValues", q, err)
		}
	}
	ctx := context.Background()
	if err := conn.Exec(ctx, "CREATE TABLE t (a UInt8, s String) ENGINE = Memory"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO t SELECT 1, 'VALUES (x)'", "   ", "-- only a comment"} {
		if err := conn.Exec(ctx, q); errors.Is(err, clickhouse.ErrInsertValues) {
			t.Errorf("%q refused as INSERT … VALUES", q)
		}
	}
}
