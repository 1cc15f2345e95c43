package config_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/config"
)

func TestKeyNames(t *testing.T) {
	t.Parallel()
	k := config.Key{Name: "kafka_brokers"}
	if k.Env() != "XBOT_KAFKA_BROKERS" || k.Flag() != "kafka-brokers" {
		t.Errorf("Env %q Flag %q", k.Env(), k.Flag())
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	secrets := []string{"pg_dsn", "api_tokens", "api_jwt_hs256_secret", "llm_api_key", "clickhouse_password", "kafka_sasl_password",
		"command_signing_key", "mcp_secrets"}
	keys := config.Keys()
	if !slices.IsSortedFunc(keys, func(a, b config.Key) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("Keys() is not sorted")
	}
	for _, k := range keys {
		if k.Usage == "" || strings.Contains(k.Usage, "\n") {
			t.Errorf("%s: usage must be one line", k.Name)
		}
		if k.Secret != slices.Contains(secrets, k.Name) {
			t.Errorf("%s: Secret = %v", k.Name, k.Secret)
		}
	}
	for _, name := range []string{"kafka_brokers", "kafka_topic_prefix", "agents_file", "executor_id",
		"data_dir", "log_format", "llm_base_url", "llm_model", "clickhouse_addr"} {
		if _, ok := config.Lookup(name); !ok {
			t.Errorf("key %s not registered", name)
		}
	}
}

func TestTypedAccessors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.src.Env["XBOT_KAFKA_BROKERS"] = " a:1, ,b:2 ,"
	w.src.Env["XBOT_COMMAND_WAIT_MAX"] = "1m30s"
	r := mustLoad(t, w.src)
	if got := r.List("kafka_brokers"); !slices.Equal(got, []string{"a:1", "b:2"}) {
		t.Errorf("List = %q", got)
	}
	if got := r.List("kafka_topic_prefix"); got != nil {
		t.Errorf("List of unset key = %q, want nil", got)
	}
	if n, err := r.Int("kafka_partitions"); err != nil || n != 12 {
		t.Errorf("Int = %d, %v", n, err)
	}
	if d, err := r.Duration("command_wait_max"); err != nil || d != 90*time.Second {
		t.Errorf("Duration = %v, %v", d, err)
	}
}

func TestTypedAccessorErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.src.Env["XBOT_KAFKA_PARTITIONS"] = "twelve"
	w.src.Env["XBOT_COMMAND_WAIT_DEFAULT"] = "5"
	w.src.Env["XBOT_PG_DSN"] = "hunter2"
	r := mustLoad(t, w.src)
	if _, err := r.Int("kafka_partitions"); err == nil ||
		!strings.Contains(err.Error(), "kafka_partitions") || !strings.Contains(err.Error(), "XBOT_KAFKA_PARTITIONS") {
		t.Errorf("Int error = %v", err)
	}
	if _, err := r.Duration("command_wait_default"); err == nil || !strings.Contains(err.Error(), "command_wait_default") {
		t.Errorf("Duration error = %v", err)
	}
	if _, err := r.Int("pg_dsn"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Int error on a secret = %v", err)
	}
}

func TestGetPanicsOnUnregisteredKey(t *testing.T) {
	t.Parallel()
	r := mustLoad(t, newWorld(t).src)
	defer func() {
		if recover() == nil {
			t.Error("Get of an unregistered key did not panic")
		}
	}()
	r.Get("no_such_key")
}
