package config

import (
	"slices"
	"strings"
)

// envPrefix is prepended to the upper-cased key name to form its one
// environment variable.
const envPrefix = "XBOT_"

// Key describes one setting.
type Key struct {
	// Name is the snake_case name, e.g. "kafka_brokers". It is also the
	// config.toml key.
	Name string
	// Default is the value used when no layer sets the key; "" means unset.
	Default string
	// Secret marks values that must never be printed (passwords, tokens).
	Secret bool
	// Usage is a one-line description shown in flag help.
	Usage string
}

// Env returns the key's one environment variable, e.g. "XBOT_KAFKA_BROKERS".
func (k Key) Env() string { return envPrefix + strings.ToUpper(k.Name) }

// Flag returns the key's flag name without dashes, e.g. "kafka-brokers".
func (k Key) Flag() string { return strings.ReplaceAll(k.Name, "_", "-") }

// registry lists every key xbot knows, in no particular order. Add a key here
// and it exists in every layer, in flag help and in explain output.
var registry = []Key{
	{Name: "kafka_brokers", Usage: "comma-separated seed brokers; empty in `xbot dev` means the embedded cluster"},
	{Name: "kafka_topic_prefix", Usage: "prefix for every topic name"},
	// 12 partitions give room to spread runs over a handful of executors
	// without repartitioning (run keys cannot move between partitions).
	{Name: "kafka_partitions", Default: "12", Usage: "partition count when xbot creates topics"},
	{Name: "kafka_replication_factor", Default: "-1", Usage: "replication factor when creating topics (-1 = broker default)"},
	{Name: "pg_dsn", Secret: true, Usage: "PostgreSQL connection string"},
	{Name: "api_addr", Default: "127.0.0.1:8080", Usage: "HTTP listen address"},
	{Name: "api_tokens", Secret: true, Usage: "bearer tokens as token=tenant,token2=tenant2"},
	{Name: "agents_file", Usage: "path of agents.yaml (built-in demo profile always present)"},
	{Name: "executor_id", Usage: "name of this executor instance (default hostname-pid)"},
	{Name: "data_dir", Usage: "dev: keep data here so a restart resumes (empty = temp dir removed at exit)"},
	{Name: "dev_kafka_addr", Default: "127.0.0.1:9092", Usage: "dev: listen address of the embedded Kafka cluster"},
	{Name: "log_level", Default: "info", Usage: "log level: debug, info, warn, error"},
	{Name: "log_format", Usage: "log format: console or json (empty = console in dev, json otherwise)"},
	// 5s covers a command's round trip through Kafka and the executor on a
	// healthy cluster; callers that need longer pass ?wait explicitly.
	{Name: "command_wait_default", Default: "5s", Usage: "how long command endpoints wait for an outcome when ?wait is absent"},
	// 30s stays below common proxy idle timeouts (60s) with margin.
	{Name: "command_wait_max", Default: "30s", Usage: "longest ?wait a command endpoint accepts"},
	// 1 MiB: a quick response even when every event of a page is a large
	// tool output; pages of ordinary events still hold hundreds.
	{Name: "events_page_max_bytes", Default: "1048576", Usage: "most envelope bytes one page of GET /v1/runs/{runId}/events returns (a larger single event comes alone)"},
	{Name: "llm_base_url", Usage: "base URL of the OpenAI-compatible model provider, e.g. https://api.openai.com/v1"},
	{Name: "llm_api_key", Secret: true, Usage: "API key of the model provider (stays in the runtime; never reaches a sandbox, event or log)"},
	{Name: "llm_model", Usage: "default model name; with llm_base_url set, the built-in demo agent uses it with the built-in tools"},
	// auto prefers isolation: bwrap when it can create namespaces here, else
	// local with a loud warning, so `xbot dev` works on any machine.
	{Name: "compute_provider", Default: "auto", Usage: "where tools run: bwrap (Linux namespaces), local (no isolation, dev only) or auto"},
	{Name: "compute_dir", Usage: "directory holding sandbox workspaces (empty = <data_dir>/sandboxes, or a temp dir)"},
	{Name: "clickhouse_addr", Usage: "ClickHouse native-protocol address, host:port; empty in `xbot dev` starts one"},
	{Name: "clickhouse_database", Default: "xbot", Usage: "ClickHouse database of the audit tables (created if missing)"},
	{Name: "clickhouse_user", Default: "default", Usage: "ClickHouse user"},
	{Name: "clickhouse_password", Secret: true, Usage: "ClickHouse password"},
}

// byName and byEnv index registry; built once at package init.
var (
	byName = indexKeys(func(k Key) string { return k.Name })
	byEnv  = indexKeys(Key.Env)
)

func indexKeys(name func(Key) string) map[string]Key {
	m := make(map[string]Key, len(registry))
	for _, k := range registry {
		if _, dup := m[name(k)]; dup {
			panic("config: duplicate key " + name(k))
		}
		m[name(k)] = k
	}
	return m
}

// Keys returns every registered key, sorted by name. The slice is a copy.
func Keys() []Key {
	keys := slices.Clone(registry)
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	return keys
}

// Lookup returns the registered key with the given snake_case name.
func Lookup(name string) (Key, bool) {
	k, ok := byName[name]
	return k, ok
}

// mustLookup returns the key or panics: asking for an unregistered name is a
// wiring bug, not a runtime condition.
func mustLookup(name string) Key {
	k, ok := byName[name]
	if !ok {
		panic("config: unregistered key " + name)
	}
	return k
}
