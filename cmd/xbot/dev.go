package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/stack"
)

// readyTimeout bounds how long dev waits for the executor to own partitions
// and the projector to report in before it gives up.
const readyTimeout = 60 * time.Second

// runDev runs the whole system in one process on embedded servers.
func runDev(ctx context.Context, args []string) error {
	s, err := load("dev", args, "console")
	if err != nil {
		return err
	}
	defer func() { _ = s.log.Sync() }()
	stopTracing, err := startTracing(ctx, s.log, "xbot-dev")
	if err != nil {
		return err
	}
	defer stopTracing()
	dataDir, cleanup, err := devDataDir(s.r.Get("data_dir"))
	if err != nil {
		return err
	}
	defer cleanup()
	d := &devRun{s: s, dataDir: dataDir, keep: s.r.Get("data_dir") != ""}
	defer d.stop()
	if err := d.start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	fmt.Println("xbot dev: stopping")
	return nil
}

// privateUmask makes every file and directory dev and its servers create
// readable by xbot's user only (0600, 0700): the data dir holds every
// tenant's events, the dev token and the generated database passwords.
const privateUmask = 0o077

// devDataDir returns the data dir, private to xbot's user, and a cleanup.
// It sets the process umask to privateUmask: dev owns the process.
func devDataDir(configured string) (string, func(), error) {
	syscall.Umask(privateUmask)
	if configured != "" {
		abs, err := filepath.Abs(configured)
		if err != nil {
			return "", nil, err
		}
		return abs, func() {}, devstack.PrivateDir(abs)
	}
	dir, err := os.MkdirTemp("", "xbot-dev-")
	if err != nil {
		return "", nil, err
	}
	if err := devstack.PrivateDir(dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

type devRun struct {
	s       *settings
	dataDir string
	keep    bool
	cluster *kafka.Cluster
	apache  *devstack.ApacheKafka // dev_kafka=apache
	pg      *devstack.Postgres
	ch      *devstack.ClickHouse
	st      *stack.Stack
	im      *imServer
	// noIM leaves the IM gateway out (bench).
	noIM bool
	// out receives the startup lines; nil is stdout.
	out io.Writer
	// tune, if set, adjusts the options just before the stack starts (bench).
	tune func(*stack.Options) error
}

func (d *devRun) printf(format string, args ...any) {
	w := d.out
	if w == nil {
		w = os.Stdout
	}
	_, _ = fmt.Fprintf(w, format, args...)
}

func (d *devRun) start(ctx context.Context) error {
	brokers, err := d.startKafka(ctx)
	if err != nil {
		return err
	}
	kcfg, err := d.s.kafka(brokers)
	if err != nil {
		return err
	}
	kcfg.InProcess = d.cluster != nil
	d.s.runsExecutor = true
	d.s.dev = true
	opts, err := d.s.stackOptions(kcfg, d.dataDir)
	if err != nil {
		return err
	}
	if opts.PGDSN == "" {
		if opts.PGDSN, err = d.startPostgres(ctx); err != nil {
			return err
		}
	}
	if opts.ClickHouse == nil {
		if opts.ClickHouse, err = d.startClickHouse(ctx); err != nil {
			return err
		}
	} else {
		d.printf("clickhouse external at %s\n", opts.ClickHouse.Addr)
	}
	token := "(configured by api_tokens)"
	if len(opts.Tokens) == 0 {
		if token, err = d.devToken(); err != nil {
			return err
		}
		opts.Tokens = map[string]string{token: "dev"}
	}
	if opts.CommandKeys.Empty() {
		if opts.CommandKeys, err = d.devCommandKeys(); err != nil {
			return err
		}
	}
	if d.tune != nil {
		if err := d.tune(&opts); err != nil {
			return err
		}
	}
	if d.st, err = stack.Start(ctx, opts); err != nil {
		return err
	}
	d.printf("migrations applied (projection_postgres)\n")
	d.printf("executor   running, agents: %s\n", strings.Join(opts.Profiles.IDs(), ", "))
	d.printf("projectors postgres, clickhouse, im running\n")
	d.printf("api        http://%s (OpenAPI at /openapi.json, docs at /docs)\n", d.st.Addr())
	if addr := d.st.MetricsAddr(); addr != "" {
		d.printf("metrics    http://%s/metrics\n", addr)
	}
	if err := d.waitReady(ctx); err != nil {
		return err
	}
	if d.noIM {
		d.printf("xbot dev ready: api=http://%s kafka=%s token=%s\n", d.st.Addr(), strings.Join(kcfg.Brokers, ","), token)
		return nil
	}
	if d.im, err = d.s.startIMGateway(ctx, kcfg, "http://"+d.st.Addr(), opts.Compute.Name()); err != nil {
		return err
	}
	d.printf("im         ws://%s%s (chat page: GET of the same path)\n", d.im.addr, strings.Join(d.im.gw.Paths(), ", ws://"+d.im.addr))
	d.printf("xbot dev ready: api=http://%s kafka=%s token=%s im=ws://%s/sandbox\n", d.st.Addr(), strings.Join(kcfg.Brokers, ","), token, d.im.addr)
	return nil
}

func (d *devRun) startKafka(ctx context.Context) ([]string, error) {
	if b := d.s.r.List("kafka_brokers"); len(b) > 0 {
		d.printf("kafka      external at %s\n", strings.Join(b, ","))
		return b, nil
	}
	parts, err := d.s.r.Int("kafka_partitions")
	if err != nil {
		return nil, err
	}
	switch kind := d.s.r.Get("dev_kafka"); kind {
	case devKafkaApache:
		return d.startApacheKafka(ctx, parts)
	case devKafkaKFake:
	default:
		return nil, fmt.Errorf("dev_kafka %q: want %s or %s", kind, devKafkaKFake, devKafkaApache)
	}
	dir := ""
	if d.keep {
		dir = filepath.Join(d.dataDir, "kafka")
	}
	sec, err := d.s.kafkaSecurity()
	if err != nil {
		return nil, err
	}
	if sec.TLS {
		return nil, errors.New("kafka_tls needs an external cluster (kafka_brokers): the embedded one speaks plaintext")
	}
	d.cluster, err = kafka.StartCluster(kafka.ClusterConfig{Addr: d.s.r.Get("dev_kafka_addr"), DataDir: dir,
		Partitions: int32(parts), SASL: sec})
	if err != nil {
		return nil, fmt.Errorf("%w (set --dev-kafka-addr or XBOT_KAFKA_BROKERS to use another)", err)
	}
	d.printf("kafka      embedded (kfake) at %s\n", strings.Join(d.cluster.Addrs(), ","))
	return d.cluster.Addrs(), nil
}

func (d *devRun) startPostgres(ctx context.Context) (string, error) {
	pg, err := devstack.StartPostgres(ctx, devstack.PostgresConfig{Dir: filepath.Join(d.dataDir, "postgres"), Logger: d.s.log.Named("postgres")})
	if err != nil {
		return "", err
	}
	d.pg = pg
	dsn, err := pg.CreateDatabase(ctx, "xbot")
	if err != nil {
		return "", err
	}
	d.printf("postgres   started from system binaries on 127.0.0.1:%d (data in %s)\n", pg.Port(), pg.Dir())
	return dsn, nil
}

func (d *devRun) startClickHouse(ctx context.Context) (*chinfra.Config, error) {
	ch, err := devstack.StartClickHouse(ctx, devstack.ClickHouseConfig{Dir: filepath.Join(d.dataDir, "clickhouse"),
		Logger: d.s.log.Named("clickhouse")})
	if err != nil {
		return nil, err
	}
	d.ch = ch
	d.printf("clickhouse started from system binaries on %s (version %s, data in %s)\n", ch.Addr(), ch.Version(), ch.Dir())
	return &chinfra.Config{Addr: ch.Addr(), Database: d.s.r.Get("clickhouse_database"), Password: ch.Password()}, nil
}

// devToken returns the dev bearer token, kept in the data dir so that a
// restarted `xbot dev --data-dir` accepts the same token.
func (d *devRun) devToken() (string, error) {
	path := filepath.Join(d.dataDir, "dev-token")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	token := "xbd_" + hex.EncodeToString(raw[:])
	if d.keep {
		if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
			return "", err
		}
	}
	return token, nil
}

// devCommandKeys generates the command-signing key, kept in the data
// directory (mode 0600) like the dev token, so commands signed before a
// restart still verify after it.
func (d *devRun) devCommandKeys() (commands.KeyRing, error) {
	path := filepath.Join(d.dataDir, "command-signing-key")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return commands.ParseKeyRing(strings.TrimSpace(string(b)))
	}
	keys := commands.GenerateKeyRing()
	if d.keep {
		if err := os.WriteFile(path, []byte(commands.FormatKey(keys.Current())+"\n"), 0o600); err != nil {
			return commands.KeyRing{}, err
		}
	}
	return keys, nil
}

// waitReady waits until the executor owns partitions and every health check passes.
func (d *devRun) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		err := d.st.Healthy(ctx)
		if err == nil && len(d.st.Executor.Partitions()) > 0 {
			return nil
		}
		if err == nil {
			err = errors.New("executor owns no partition yet")
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("not ready after %s: %w", readyTimeout, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (d *devRun) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if d.im != nil {
		d.im.stop()
	}
	if d.st != nil {
		d.st.Stop(ctx)
	}
	if d.pg != nil {
		if err := d.pg.Stop(ctx); err != nil {
			d.s.log.Warn("stopping postgres", zap.Error(err))
		}
	}
	if d.ch != nil {
		if err := d.ch.Stop(ctx); err != nil {
			d.s.log.Warn("stopping clickhouse", zap.Error(err))
		}
	}
	if d.cluster != nil {
		d.cluster.Close()
	}
	if d.apache != nil {
		if err := d.apache.Close(); err != nil {
			d.s.log.Warn("stopping apache kafka", zap.Error(err))
		}
	}
}
