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
	// Variable is the environment variable when it is not XBOT_ + the
	// upper-cased name: a provider's setting (ScopedEnv).
	Variable string
}

// Env returns the key's one environment variable, e.g. "XBOT_KAFKA_BROKERS".
func (k Key) Env() string {
	if k.Variable != "" {
		return k.Variable
	}
	return envPrefix + strings.ToUpper(k.Name)
}

// Flag returns the key's flag name without dashes, e.g. "kafka-brokers".
func (k Key) Flag() string { return strings.ReplaceAll(k.Name, "_", "-") }

// registry lists every key xbot knows, in no particular order. Add a key here
// and it exists in every layer, in flag help and in explain output.
var registry = []Key{
	{Name: "kafka_brokers", Usage: "comma-separated seed brokers; empty in `xbot dev` means the embedded cluster"},
	{Name: "kafka_topic_prefix", Usage: "prefix for every topic name"},
	{Name: "kafka_group_prefix", Usage: "prefix for every consumer group and transactional id (the executors', the projectors')"},
	// 12 partitions give room to spread runs over a handful of executors
	// without repartitioning (run keys cannot move between partitions).
	{Name: "kafka_partitions", Default: "12", Usage: "partition count when xbot creates topics"},
	{Name: "kafka_replication_factor", Default: "-1", Usage: "replication factor when creating topics (-1 = broker default)"},
	{Name: "kafka_transaction_version", Default: "1", Usage: "transaction protocol of the executors' partition writers: 1 adds partitions with AddPartitionsToTxn (faster commits on Kafka 4), 2 uses the cluster's transaction version 2 (KIP-890 part 2) where it has it"},
	{Name: "kafka_sasl_mechanism", Usage: "SASL mechanism for every Kafka client: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty = no SASL)"},
	{Name: "kafka_sasl_username", Usage: "SASL username"},
	{Name: "kafka_sasl_password", Secret: true, Usage: "SASL password"},
	{Name: "kafka_tls", Default: "false", Usage: "encrypt Kafka connections with TLS and verify the brokers' certificates"},
	{Name: "kafka_tls_ca_file", Usage: "PEM file of the CAs that sign the brokers' certificates (empty = system roots)"},
	{Name: "kafka_tls_cert_file", Usage: "PEM client certificate for mutual TLS (with kafka_tls_key_file)"},
	{Name: "kafka_tls_key_file", Usage: "PEM key of kafka_tls_cert_file"},
	{Name: "kafka_tls_server_name", Usage: "name to verify in the brokers' certificates (empty = the broker host)"},
	{Name: "pg_dsn", Secret: true, Usage: "PostgreSQL connection string"},
	{Name: "api_addr", Default: "127.0.0.1:8080", Usage: "HTTP listen address"},
	// 9464 is the port Prometheus exporters of OpenTelemetry use; loopback
	// keeps operational figures off the network until an operator opens it.
	{Name: "metrics_addr", Default: "127.0.0.1:9464", Usage: "listen address of the process's Prometheus /metrics endpoint, a listener apart from the API's (off = none); each process on a host needs its own"},
	{Name: "api_tokens", Secret: true, Usage: "bearer tokens as token=tenant or token=tenant/actor/scope+scope (scopes full, read, demo, act_as), comma-separated"},
	{Name: "api_jwt_hs256_secret", Secret: true, Usage: "accept HS256 JWT bearer tokens signed with this secret (at least 32 bytes)"},
	{Name: "api_jwt_public_key_file", Usage: "accept RS256/ES256 JWT bearer tokens verified with this PEM public key"},
	{Name: "api_jwt_issuer", Usage: "required iss claim of JWT bearer tokens"},
	{Name: "api_jwt_audience", Usage: "required aud claim of JWT bearer tokens"},
	{Name: "api_cors_origins", Usage: "origins (scheme://host[:port], comma-separated, or *) whose browser pages may call the API and read its answers and streams (empty = CORS off; see docs/clients.md)"},
	{Name: "api_cors_credentials", Default: "false", Usage: "let allowed origins send cookies and HTTP authentication with their requests (not needed for bearer tokens; never with *)"},
	// 8086 is the sandbox channel's usual port (the seed's host address).
	{Name: "im_addr", Default: "127.0.0.1:8086", Usage: "listen address of the IM gateway's sandbox endpoints and chat page (xbot im-gateway, xbot dev)"},
	{Name: "im_endpoints", Usage: "the IM gateway's sandbox endpoints as id=owner, comma-separated: the first at /sandbox, the others at /sandbox/<id> (empty = sandbox-bot=sandbox-user); re-read on SIGHUP"},
	{Name: "im_api_url", Usage: "base URL of the API the IM gateway sends its clients' messages to (empty = http://<api_addr>; xbot dev: its own API)"},
	{Name: "im_agent", Default: "demo", Usage: "the agent a new IM conversation's first run starts"},
	{Name: "im_media_dir", Usage: "the only directory whose files an outbound IM media segment's path may name (empty = path media dropped)"},
	{Name: "im_shell_isolation", Usage: "what the IM gateway's ready frame reports of the executors' sandbox provider: bwrap or local (empty = unknown; xbot dev: the provider it runs)"},
	{Name: "api_public_url", Usage: "external base URL of the API for the schema links of answers (Link rel=describedBy; empty = relative links)"},
	// 10s: a slow link sends its headers in well under this; a client that
	// does not is holding the connection hostage.
	{Name: "api_read_header_timeout", Default: "10s", Usage: "longest time a client may take to send its request headers"},
	// 60s matches common load balancers' idle timeout.
	{Name: "api_idle_timeout", Default: "60s", Usage: "close a keep-alive connection idle for this long"},
	{Name: "api_max_header_bytes", Default: "65536", Usage: "largest request header block accepted (431 beyond)"},
	// Each connection costs a goroutine and buffers; idle ones count too.
	{Name: "api_max_conns", Default: "4096", Usage: "most concurrently open connections of one API instance"},
	// A write holds its slot for its CPU work and a round trip or two; a
	// burst beyond the slots waits instead of starving the streams.
	{Name: "api_max_concurrent_writes", Default: "0", Usage: "most write requests (commands) one API instance prepares at once, until each command is sent; more wait their turn (0: four per processor)"},
	{Name: "api_max_streams", Default: "2048", Usage: "most open SSE streams of one API instance (429 too_many_streams beyond)"},
	{Name: "api_max_streams_per_principal", Default: "32", Usage: "most open SSE streams of one token's principal (429 too_many_streams beyond)"},
	// 2s: the read model and every instance's tail lag milliseconds on a
	// healthy system; a client should not wait longer than this for a 404.
	{Name: "api_stream_appear_wait", Default: "2s", Usage: "longest a read or stream of a run or session the read model does not hold yet waits for it: for this instance's tail to pass everything committed before the read, then for the read model (404 after it)"},
	// 30s rides out a Kafka leader election or a database failover; a
	// dependency gone for good then frees the write's slot and tells its client.
	{Name: "api_write_timeout", Default: "30s", Usage: "longest a write request (command) takes until its command is sent: its turn, the database's claims, the produce; past it 503 unavailable (the command may still be queued: retry with the same Idempotency-Key)"},
	{Name: "agents_file", Usage: "path of agents.yaml (built-in demo profile always present)"},
	{Name: "mcp_secrets", Secret: true, Usage: "secrets the headers of agents' remote MCP servers name (${NAME}), as NAME=value, comma-separated; put in by executors, never seen by a model, sandbox, event or log"},
	{Name: "mcp_secrets_file", Usage: "file of NAME=value lines (dotenv syntax) with more MCP header secrets, e.g. values holding commas"},
	{Name: "skills_dir", Usage: "the skill store (xbot skill add|list), read by every process that runs or lists agents with skills; its parents must be searchable by the sandbox user (empty = /var/lib/xbot/skills as root, else ~/.xbot/skills)"},
	{Name: "executor_id", Usage: "name of this executor instance (default hostname-pid)"},
	// A week covers a client's retries and a person's follow-up after a
	// weekend; each remembered run costs its checkpoint in Kafka and about
	// 120 bytes of executor memory.
	{Name: "executor_remember_finished", Default: "168h", Usage: "how long a finished run is remembered: until then a command on it gets the answer it would have got when it ended (a repeated idempotency key its original outcome); after it, run_not_found. The API answers a create retried on a run that ended longer ago than half of it from the read models instead of sending it; give the API and the executors the same value"},
	{Name: "data_dir", Usage: "dev: keep data here so a restart resumes (empty = temp dir removed at exit)"},
	{Name: "dev_kafka_addr", Default: "127.0.0.1:9092", Usage: "dev: listen address of the embedded Kafka cluster"},
	// kfake starts in milliseconds; apache is the broker users run, at the
	// cost of a JVM (seconds, a few hundred MB).
	{Name: "dev_kafka", Default: "kfake", Usage: "dev: the Kafka dev starts when kafka_brokers is empty: kfake (in process) or apache (one local Apache Kafka broker; needs java, and mvn once); flag --kafka"},
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
	{Name: "compute_provider", Default: "auto", Usage: "where tools run: bwrap (Linux namespaces), local (no isolation, dev only), auto, or the id of an installed provider plugin (xbot provider list; docs/providers.md)"},
	// 65200 lies in Debian's reserved range 65000-65533: no package or
	// adduser allocates it, so it is no login user's.
	{Name: "sandbox_uid", Default: "65200", Usage: "host uid of sandboxed tool processes when xbot runs as root (bwrap; never 0)"},
	{Name: "sandbox_gid", Default: "65200", Usage: "host gid of sandboxed tool processes when xbot runs as root (bwrap; never 0)"},
	{Name: "compute_dir", Usage: "directory holding sandbox workspaces (empty = <data_dir>/sandboxes, or a temp dir)"},
	// Sandbox limits: a profile's sandbox settings override the first four.
	// 1 GiB, 256 processes and one core fit ordinary builds and test suites.
	{Name: "sandbox_memory_mib", Default: "1024", Usage: "memory of one sandbox's processes together, MiB (profile sandbox.memoryMiB overrides)"},
	{Name: "sandbox_pids", Default: "256", Usage: "processes and threads of one sandbox at once (profile sandbox.pids overrides)"},
	{Name: "sandbox_cpu_millis", Default: "1000", Usage: "CPU quota of one sandbox in thousandths of a core (profile sandbox.cpuMillis overrides)"},
	{Name: "sandbox_workspace_mib", Default: "1024", Usage: "disk of one sandbox key's directories, MiB (profile sandbox.workspaceMiB overrides)"},
	{Name: "sandbox_limits", Default: "auto", Usage: "what enforces sandbox limits: auto (cgroup v2, else v1, else rlimits), cgroup2, cgroup1 or rlimit"},
	{Name: "sandbox_cgroup_parent", Usage: "cgroup v2 directory delegated to xbot for sandbox groups (empty = its own cgroup)"},
	// 8 per tenant and 64 in all keep one tenant from taking the host; a
	// run over a cap waits up to sandbox_wait for a slot, then its tool call fails.
	{Name: "sandbox_max_per_tenant", Default: "8", Usage: "sandboxes one tenant may have open at once on an executor"},
	{Name: "sandbox_max_total", Default: "64", Usage: "sandboxes open at once on an executor"},
	{Name: "sandbox_wait", Default: "30s", Usage: "how long a run waits for a sandbox slot before its tool call fails"},
	{Name: "clickhouse_addr", Usage: "ClickHouse native-protocol address, host:port; empty in `xbot dev` starts one"},
	{Name: "clickhouse_database", Default: "xbot", Usage: "ClickHouse database of the audit tables (created if missing)"},
	{Name: "clickhouse_user", Default: "default", Usage: "ClickHouse user"},
	{Name: "clickhouse_password", Secret: true, Usage: "ClickHouse password"},
	// An insert costs ClickHouse about the same whatever its size; half a
	// second of gathering cut its CPU per run to a third under xbot bench.
	{Name: "clickhouse_projector_linger", Default: "500ms", Usage: "how long the audit projector gathers events for one ClickHouse insert (or until projector_max_batch_bytes are ready); 0s inserts each fetch as it comes; at most 30s"},
	// 10,000 events of ~500 bytes are ~5 MB: one Postgres transaction or
	// ClickHouse insert of that size commits in tens of milliseconds.
	{Name: "projector_max_batch", Default: "10000", Usage: "most events one projector applies in one batch (one Postgres transaction, one ClickHouse insert)"},
	{Name: "projector_max_batch_bytes", Default: "8388608", Usage: "most event bytes one projector applies in one batch (a larger single event comes alone); also each fetch's size"},
	{Name: "command_signing_key", Secret: true, Usage: "keys the API signs commands with and executors verify them by, as id:base64secret[,id2:base64secret] (first signs, all verify; secrets >= 32 bytes); required by split api and executor, generated by `xbot dev`"},
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
