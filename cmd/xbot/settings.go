package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/logging"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

// settings is the resolved configuration of one command.
type settings struct {
	r   *config.Resolved
	log *zap.Logger
	// runsExecutor says this process runs an executor (it needs a sandbox provider).
	runsExecutor bool
	// needsCommandKey says this process runs the API or the executor apart
	// from the other, so command_signing_key must be set.
	needsCommandKey bool
	// dev says this process is `xbot dev`: compute_provider=auto may fall
	// back to no isolation there, and nowhere else.
	dev bool
	// flags are the command line's settings, for a reload that re-reads the others.
	flags map[string]string
	// store holds the installed compute providers (~/.xbot/providers).
	store *plugin.Store
	// modelKeys are the variables of the agents' model keys, which no
	// provider plugin gets.
	modelKeys modelKeyVars
}

// flagAliases are shorter flags a command accepts for a key, by command:
// alias → key.
var flagAliases = map[string]map[string]string{"dev": {"kafka": "dev_kafka"}}

// load parses the command's flags and resolves every layer.
func load(name string, args []string, defaultFormat string) (*settings, error) {
	fs := flag.NewFlagSet("xbot "+name, flag.ContinueOnError)
	set := config.BindFlags(fs)
	aliased := bindAliases(fs, flagAliases[name])
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	flags := set()
	aliased(flags)
	return settingsFrom(flags, defaultFormat)
}

// bindAliases registers each alias as a flag sharing its key's flag; the
// returned function adds the aliases that were set to flags, by key name.
func bindAliases(fs *flag.FlagSet, aliases map[string]string) func(map[string]string) {
	for alias, key := range aliases {
		f := fs.Lookup(strings.ReplaceAll(key, "_", "-"))
		fs.Var(f.Value, alias, "short for --"+f.Name)
	}
	return func(flags map[string]string) {
		fs.Visit(func(f *flag.Flag) {
			if key, ok := aliases[f.Name]; ok {
				flags[key] = f.Value.String()
			}
		})
	}
}

// settingsFrom resolves every layer given the flags that were set.
func settingsFrom(flags map[string]string, defaultFormat string) (*settings, error) {
	store := storeIn(userHome())
	var storeErrs []error
	scopes := storeScopes(store, func(err error) { storeErrs = append(storeErrs, err) })
	r, err := config.Load(config.Sources{Flags: flags, Scopes: scopes})
	if err != nil {
		return nil, err
	}
	format := r.Get("log_format")
	if format == "" {
		format = defaultFormat
	}
	log, err := logging.New(logging.Config{Level: r.Get("log_level"), Format: format})
	if err != nil {
		return nil, err
	}
	if unknown := config.UnknownEnv(envMap(), scopes...); len(unknown) > 0 {
		log.Warn("ignoring unknown XBOT_ environment variables", zap.Strings("names", unknown))
	}
	for _, err := range storeErrs {
		log.Warn("an installed compute provider cannot be read", zap.Error(err))
	}
	return &settings{r: r, log: log, flags: flags, store: store}, nil
}

func envMap() map[string]string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func (s *settings) kafka(brokers []string) (kafka.Config, error) {
	parts, err := s.r.Int("kafka_partitions")
	if err != nil {
		return kafka.Config{}, err
	}
	rf, err := s.r.Int("kafka_replication_factor")
	if err != nil {
		return kafka.Config{}, err
	}
	tv, err := s.r.Int("kafka_transaction_version")
	if err != nil {
		return kafka.Config{}, err
	}
	if tv != 1 && tv != 2 {
		return kafka.Config{}, fmt.Errorf("kafka_transaction_version must be 1 or 2, got %d", tv)
	}
	if brokers == nil {
		brokers = s.r.List("kafka_brokers")
	}
	sec, err := s.kafkaSecurity()
	if err != nil {
		return kafka.Config{}, err
	}
	c := kafka.Config{Brokers: brokers, TopicPrefix: s.r.Get("kafka_topic_prefix"), GroupPrefix: s.r.Get("kafka_group_prefix"),
		Partitions: int32(parts), ReplicationFactor: int16(rf), TransactionVersion: int16(tv), Security: sec}.WithDefaults()
	return c, c.Validate()
}

// kafkaSecurity reads the kafka_sasl_* and kafka_tls* keys. It warns when the
// SASL password would cross the network in clear.
func (s *settings) kafkaSecurity() (kafka.Security, error) {
	useTLS, err := s.r.Bool("kafka_tls")
	if err != nil {
		return kafka.Security{}, err
	}
	sec := kafka.Security{
		SASLMechanism: s.r.Get("kafka_sasl_mechanism"), SASLUsername: s.r.Get("kafka_sasl_username"),
		SASLPassword: s.r.Get("kafka_sasl_password"), TLS: useTLS,
		TLSCAFile: s.r.Get("kafka_tls_ca_file"), TLSCertFile: s.r.Get("kafka_tls_cert_file"),
		TLSKeyFile: s.r.Get("kafka_tls_key_file"), TLSServerName: s.r.Get("kafka_tls_server_name"),
	}
	if sec.SASLMechanism == kafka.SASLPlain && !sec.TLS {
		s.log.Warn("kafka_sasl_mechanism PLAIN without kafka_tls sends the Kafka password in clear")
	}
	return sec, nil
}

func (s *settings) waits() (time.Duration, time.Duration, error) {
	def, err := s.r.Duration("command_wait_default")
	if err != nil {
		return 0, 0, err
	}
	maxWait, err := s.r.Duration("command_wait_max")
	return def, maxWait, err
}

func runExplain(args []string) error {
	fs := flag.NewFlagSet("xbot config explain", flag.ContinueOnError)
	set := config.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	scopes := storeScopes(storeIn(userHome()), func(err error) { fmt.Fprintln(os.Stderr, "xbot: warning:", err) })
	r, err := config.Load(config.Sources{Flags: set(), Scopes: scopes})
	if err != nil {
		return err
	}
	return r.Explain(os.Stdout)
}
