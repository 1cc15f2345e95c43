package devstack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"go.uber.org/zap"
)

// DefaultKafkaVersion is the Apache Kafka release StartApacheKafka runs when
// ApacheKafkaConfig.Version is empty: the newest 4.x that Maven Central
// serves and that runs on Java 17 here; its transactions use KIP-890
// (transaction.version 2), as production clusters of 4.x do.
const DefaultKafkaVersion = "4.4.0"

// KafkaJarsDirEnv names the environment variable that, when set, is the
// default ApacheKafkaConfig.JarsDir.
const KafkaJarsDirEnv = "XBOT_KAFKA_JARS_DIR"

// defaultKafkaJVMOpts keep a broker within a few hundred MB so three fit a
// 2-core, small-memory machine next to Postgres and ClickHouse: a dev broker
// holds little data, and the serial collector needs no GC threads.
var defaultKafkaJVMOpts = []string{"-Xms128m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError"}

// ApacheKafkaConfig configures StartApacheKafka.
type ApacheKafkaConfig struct {
	// Dir is the data root. Required. Node i (0-based) keeps its properties,
	// its KRaft storage and its log (kafka.log) in Dir/node-<i+1>; the
	// cluster id is in Dir/cluster.id; the JVMs' temporary files (their
	// java.io.tmpdir) in Dir/tmp. Created when missing; a second start
	// on the same Dir keeps the data.
	Dir string
	// Brokers is the number of nodes, each a combined controller and broker:
	// 1, or 3 (replication factor 3, min.insync.replicas 2). Default 1.
	Brokers int
	// Version is the Apache Kafka release (org.apache.kafka:kafka_2.13).
	// Default DefaultKafkaVersion.
	Version string
	// JarsDir holds the broker's runtime jars; when it has none, Maven
	// resolves them into it once. Default $XBOT_KAFKA_JARS_DIR, else
	// ~/.cache/xbot/kafka-<Version>/libs.
	JarsDir string
	// Java is the java executable (17 or newer). Default: java on $PATH.
	Java string
	// Maven is the mvn executable, needed only while JarsDir is empty.
	// Default: mvn on $PATH.
	Maven string
	// JVMOpts are the JVM options of each broker. Default -Xms128m -Xmx384m
	// -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError.
	JVMOpts []string
	// BrokerPort is node 1's client port on 127.0.0.1 (`xbot dev` gives
	// its dev_kafka_addr). Default 0: a free port, as for every other port.
	BrokerPort int
	// Partitions is the partition count of auto-created topics, as
	// infra/kafka's embedded cluster has. Default 12.
	Partitions int
	// Logger receives lifecycle events. Default: zap.NewNop().
	Logger *zap.Logger
	// SASLUsers, when set, makes every broker's client listener
	// SASL_PLAINTEXT: a client must sign in as one of these users (name →
	// password) with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, and one that
	// does not is refused. The brokers sign in to each other with PLAIN as
	// an internal user whose password is drawn anew at every start. Names
	// are letters, digits, '.', '_' and '-'; a password is not empty and
	// holds no '"', '\' or control character. No authorizer runs: a user
	// signed in may do everything.
	SASLUsers map[string]string
	// TLS, when set, makes every broker's client listener speak TLS.
	TLS *ApacheTLS
}

func (c *ApacheKafkaConfig) setDefaults() {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Brokers == 0 {
		c.Brokers = 1
	}
	if c.Version == "" {
		c.Version = DefaultKafkaVersion
	}
	if c.JarsDir == "" {
		c.JarsDir = defaultJarsDir(c.Version)
	}
	if len(c.JVMOpts) == 0 {
		c.JVMOpts = defaultKafkaJVMOpts
	}
	if c.Partitions == 0 {
		c.Partitions = 12
	}
	for _, p := range []*string{&c.Dir, &c.JarsDir} {
		if abs, err := filepath.Abs(*p); *p != "" && err == nil {
			*p = abs
		}
	}
}

// defaultJarsDir is $XBOT_KAFKA_JARS_DIR or ~/.cache/xbot/kafka-<v>/libs
// ("" when neither the variable nor a cache directory is known).
func defaultJarsDir(version string) string {
	if dir := os.Getenv(KafkaJarsDirEnv); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "xbot", "kafka-"+version, "libs")
}

// Validate reports every problem of the configuration at once.
func (c ApacheKafkaConfig) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("devstack: ApacheKafkaConfig.Dir is required"))
	}
	if c.Brokers != 1 && c.Brokers != 3 {
		errs = append(errs, fmt.Errorf("devstack: ApacheKafkaConfig.Brokers %d must be 1 or 3", c.Brokers))
	}
	if c.JarsDir == "" {
		errs = append(errs, fmt.Errorf("devstack: ApacheKafkaConfig.JarsDir is required when neither $%s nor a user cache directory is set", KafkaJarsDirEnv))
	}
	if c.BrokerPort < 0 || c.BrokerPort > 65535 {
		errs = append(errs, fmt.Errorf("devstack: ApacheKafkaConfig.BrokerPort %d is not a port", c.BrokerPort))
	}
	if c.Partitions < 1 {
		errs = append(errs, fmt.Errorf("devstack: ApacheKafkaConfig.Partitions %d must be at least 1", c.Partitions))
	}
	if c.TLS != nil {
		errs = append(errs, c.TLS.validate())
	}
	for name, pw := range c.SASLUsers {
		if !saslName.MatchString(name) || name == saslBrokerUser {
			errs = append(errs, fmt.Errorf("devstack: ApacheKafkaConfig.SASLUsers: user name %q is not allowed (letters, digits, '.', '_', '-'; not %q)", name, saslBrokerUser))
		}
		if pw == "" || strings.ContainsFunc(pw, func(r rune) bool { return r == '"' || r == '\\' || unicode.IsControl(r) }) {
			// The password itself is never part of an error.
			errs = append(errs, fmt.Errorf("devstack: ApacheKafkaConfig.SASLUsers: the password of %q is empty or holds '\"', '\\' or a control character", name))
		}
	}
	return errors.Join(errs...)
}

// saslName is what a SASL user's name may hold: it is written into the
// brokers' JAAS configuration unquoted, and SCRAM gives ',' and '=' meaning.
var saslName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
