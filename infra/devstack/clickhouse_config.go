package devstack

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"go.uber.org/zap"
)

// ClickHouseConfig configures StartClickHouse.
type ClickHouseConfig struct {
	// Dir is the data root. Required. Data lives in Dir/data, logs in
	// Dir/log, the generated configuration in Dir/config.xml and
	// Dir/users.xml. Created with its parents when missing.
	Dir string
	// TCPPort is the native-protocol port on 127.0.0.1 and HTTPPort the
	// HTTP port. Default 0: pick free ports (and retry with others if one is
	// taken before the server binds it).
	TCPPort  int
	HTTPPort int
	// Binary is the server executable: clickhouse-server, or the multi-call
	// clickhouse binary (then run as "clickhouse server"). Default "":
	// clickhouse-server on $PATH or in /usr/sbin or /usr/bin, else clickhouse.
	Binary string
	// Logger receives lifecycle events. Default: zap.NewNop().
	Logger *zap.Logger
}

func (c *ClickHouseConfig) setDefaults() {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Dir != "" {
		if abs, err := filepath.Abs(c.Dir); err == nil {
			c.Dir = abs
		}
	}
}

// Validate reports every problem of the configuration at once.
func (c ClickHouseConfig) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("devstack: ClickHouseConfig.Dir is required"))
	}
	for name, p := range map[string]int{"TCPPort": c.TCPPort, "HTTPPort": c.HTTPPort} {
		if p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("devstack: ClickHouseConfig.%s %d out of range 0-65535", name, p))
		}
	}
	if c.TCPPort != 0 && c.TCPPort == c.HTTPPort {
		errs = append(errs, fmt.Errorf("devstack: ClickHouseConfig.TCPPort and HTTPPort are both %d", c.TCPPort))
	}
	if c.Binary != "" && !filepath.IsAbs(c.Binary) {
		errs = append(errs, fmt.Errorf("devstack: ClickHouseConfig.Binary %q must be absolute", c.Binary))
	}
	return errors.Join(errs...)
}

// ErrClickHouseMissing matches (errors.Is) the error returned when no
// ClickHouse server binary can be found.
var ErrClickHouseMissing = errors.New("ClickHouse server binary not found")

// ClickHouseMissingError reports where the ClickHouse binary was looked for.
// It matches ErrClickHouseMissing.
type ClickHouseMissingError struct {
	// Looked lists the places searched, in order.
	Looked []string
}

// Error is one sentence naming the package to install.
func (e *ClickHouseMissingError) Error() string {
	return fmt.Sprintf("%s (looked in %s); install it with: apt-get install -y clickhouse-server",
		ErrClickHouseMissing, strings.Join(e.Looked, ", "))
}

// Is reports whether target is ErrClickHouseMissing.
func (e *ClickHouseMissingError) Is(target error) bool { return target == ErrClickHouseMissing }

// clickHouseBinary returns the server command: the executable and the
// arguments that come before the configuration flag.
func clickHouseBinary(configured string) (string, []string, error) {
	if configured != "" {
		if !isExecutable(configured) {
			return "", nil, &ClickHouseMissingError{Looked: []string{configured}}
		}
		if filepath.Base(configured) == "clickhouse" {
			return configured, []string{"server"}, nil
		}
		return configured, nil, nil
	}
	if p, err := exec.LookPath("clickhouse-server"); err == nil {
		return p, nil, nil
	}
	for _, p := range []string{"/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server"} {
		if isExecutable(p) {
			return p, nil, nil
		}
	}
	if p, err := exec.LookPath("clickhouse"); err == nil {
		return p, []string{"server"}, nil
	}
	return "", nil, &ClickHouseMissingError{Looked: []string{"clickhouse-server on $PATH",
		"/usr/sbin/clickhouse-server", "/usr/bin/clickhouse-server", "clickhouse on $PATH"}}
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode().Perm()&0o111 != 0
}

// The generated configuration. The root element is <yandex>, which every
// release since 18.16 accepts. The dev_dir macro lets the readiness check
// tell this server from another one that took its port. On shutdown the
// server waits for open client connections: shutdown_wait_unfinished (1 s,
// default 5 s) caps that wait, and poll_interval (1 s, default 10 s) is how
// long an idle connection's handler takes to notice; with the defaults one
// idle pooled client connection delays Stop by ~10 s.
const (
	clickHouseServerXML = `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>{{dir}}/log/server.log</log><errorlog>{{dir}}/log/server.err.log</errorlog></logger>
  <listen_host>127.0.0.1</listen_host>
  <tcp_port>{{tcp}}</tcp_port>
  <http_port>{{http}}</http_port>
  <path>{{dir}}/data/</path>
  <tmp_path>{{dir}}/tmp/</tmp_path>
  <user_files_path>{{dir}}/user_files/</user_files_path>
  <format_schema_path>{{dir}}/format_schemas/</format_schema_path>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>100</max_concurrent_queries>
  <max_table_size_to_drop>0</max_table_size_to_drop>
  <max_partition_size_to_drop>0</max_partition_size_to_drop>
  <shutdown_wait_unfinished>1</shutdown_wait_unfinished>
  <timezone>UTC</timezone>
  <umask>077</umask>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <users_config>{{dir}}/users.xml</users_config>
  <macros><dev_dir>{{dir}}</dev_dir></macros>
</yandex>
`
	clickHouseUsersXML = `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>4000000000</max_memory_usage><poll_interval>1</poll_interval></default></profiles>
  <users><default><password_sha256_hex>{{password_sha256}}</password_sha256_hex><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`
)

// clickHousePasswordFile holds the password of user "default" in the data
// root; users.xml holds only its SHA-256.
const clickHousePasswordFile = "default.password"

// clickHouseSubdirs are the directories the server expects to exist.
var clickHouseSubdirs = []string{"data", "tmp", "log", "user_files", "format_schemas"}

// writeClickHouseConfig creates the directories of dir and writes the server
// and users configuration for the given ports.
func writeClickHouseConfig(dir, password string, tcpPort, httpPort int) error {
	for _, sub := range clickHouseSubdirs {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return fmt.Errorf("create %s: %w", sub, err)
		}
	}
	server := strings.NewReplacer("{{dir}}", xmlEscape(dir),
		"{{tcp}}", fmt.Sprint(tcpPort), "{{http}}", fmt.Sprint(httpPort)).Replace(clickHouseServerXML)
	if err := os.WriteFile(filepath.Join(dir, "config.xml"), []byte(server), 0o600); err != nil {
		return fmt.Errorf("write config.xml: %w", err)
	}
	sum := sha256.Sum256([]byte(password))
	users := strings.ReplaceAll(clickHouseUsersXML, "{{password_sha256}}", hex.EncodeToString(sum[:]))
	if err := os.WriteFile(filepath.Join(dir, "users.xml"), []byte(users), 0o600); err != nil {
		return fmt.Errorf("write users.xml: %w", err)
	}
	return nil
}

// xmlEscape escapes text for an XML element.
func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
