package devstack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// ApacheKafka is a running Apache Kafka cluster started by StartApacheKafka:
// one or three nodes, each a combined KRaft controller and broker on
// 127.0.0.1, each a JVM that is a direct child process in its own process
// group. On Linux every JVM gets SIGKILL when the OS thread that started it
// dies, so no broker outlives a crashed or killed caller; data written before
// then is in the page cache and survives.
//
// The methods taking a node index i (0 ≤ i < Brokers) are for failure tests;
// they must not be called concurrently with each other or with Close.
type ApacheKafka struct {
	cfg       ApacheKafkaConfig
	java      string
	clusterID string
	nodes     []*kafkaNode
	sec       listenerSecurity
	mu        sync.Mutex // guards the nodes' procs between Close and the methods above
	closeOnce sync.Once
	closeErr  error
}

// Timeouts of a cluster's life.
const (
	// kafkaReadyTimeout bounds the wait for started brokers to serve: a
	// JVM is ready in ~9 s here; three on 2 cores, on a loaded CI box, can
	// take several times that.
	kafkaReadyTimeout = 2 * time.Minute
	// kafkaStopGrace is how long a broker may take for a controlled
	// shutdown before it is killed: seconds normally, but a broker whose
	// controller quorum is already gone waits for it until killed.
	kafkaStopGrace = 15 * time.Second
)

// StartApacheKafka resolves the broker's jars (once, with Maven, into
// cfg.JarsDir), formats each node's KRaft storage with one cluster id when
// Dir is new, starts the nodes and returns once every broker answers a
// metadata request naming all of them and the cluster has committed a
// transaction. ctx bounds the start only; the cluster runs until Close. A
// start whose node finds one of its ports taken begins again on new ports,
// up to portAttempts times.
//
// Errors: ErrJavaMissing, ErrMavenMissing (both joined when both are
// missing), ErrKafkaJarsUnresolved with Maven's last lines, or a broker that
// did not become ready with the tail of its log.
func StartApacheKafka(ctx context.Context, cfg ApacheKafkaConfig) (*ApacheKafka, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	java, mvn, err := findTools(cfg)
	if err != nil {
		return nil, err
	}
	if err := resolveJars(ctx, cfg, mvn); err != nil {
		return nil, err
	}
	started := time.Now()
	for attempt := 1; ; attempt++ {
		k, err := newApacheKafka(cfg, java)
		if err != nil {
			return nil, err
		}
		if err = k.start(ctx); err == nil {
			cfg.Logger.Info("devstack: apache kafka ready", zap.String("dir", cfg.Dir), zap.String("version", cfg.Version),
				zap.Strings("addrs", k.Addrs()), zap.Duration("took", time.Since(started)))
			return k, nil
		}
		_ = k.Close() // the start error is what matters
		if !errors.Is(err, errPortTaken) || attempt == portAttempts || ctx.Err() != nil {
			return nil, err
		}
		cfg.Logger.Warn("devstack: a kafka node's port was taken before the node bound it; starting again on other ports",
			zap.String("dir", cfg.Dir), zap.Int("attempt", attempt))
	}
}

// portAttempts is how many times StartApacheKafka starts the cluster, on
// new ports each time, while a node finds one of its ports taken: ports are
// picked free (FreePort) seconds before the JVMs bind them, and in between
// any process may take one, if only as the local port of a connection.
const portAttempts = 3

// errPortTaken marks a start that failed because a node could not bind one
// of its ports.
var errPortTaken = errors.New("a kafka node's port is taken")

// newApacheKafka prepares Dir: its cluster id, the log4j configuration, the
// JVMs' temporary directory and each node's directory, ports and
// server.properties.
func newApacheKafka(cfg ApacheKafkaConfig, java string) (*ApacheKafka, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data root %s: %w", cfg.Dir, err)
	}
	dir, err := filepath.EvalSymlinks(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolve data root %s: %w", cfg.Dir, err)
	}
	cfg.Dir = dir
	k := &ApacheKafka{cfg: cfg, java: java}
	if len(cfg.SASLUsers) > 0 {
		k.sec.sasl = newSASLSetup(cfg.SASLUsers)
	}
	if cfg.TLS != nil {
		if k.sec.tls, err = newTLSSetup(*cfg.TLS, dir); err != nil {
			return nil, err
		}
	}
	if k.clusterID, err = readOrCreateClusterID(filepath.Join(dir, "cluster.id")); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "log4j2.properties"), []byte(kafkaLog4j), 0o600); err != nil {
		return nil, fmt.Errorf("write kafka log config: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, jvmTmpDir), 0o700); err != nil {
		return nil, fmt.Errorf("create the brokers' temporary directory: %w", err)
	}
	if err := k.prepareNodes(); err != nil {
		k.closeLogs()
		return nil, err
	}
	return k, nil
}

// prepareNodes picks each node's ports (node 1's client port may be
// configured) and writes its server.properties. Ports are picked anew on
// every start: the voters are configuration, not stored state, so a
// restarted cluster may move.
func (k *ApacheKafka) prepareNodes() error {
	var voters []string
	for i := range k.cfg.Brokers {
		n := &kafkaNode{id: i + 1, dir: filepath.Join(k.cfg.Dir, "node-"+strconv.Itoa(i+1))}
		k.nodes = append(k.nodes, n)
		var err error
		if n.brokerPort = k.cfg.BrokerPort; i > 0 || n.brokerPort == 0 {
			if n.brokerPort, err = FreePort(); err != nil {
				return err
			}
		}
		if n.controllerPort, err = FreePort(); err != nil {
			return err
		}
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", n.id, n.controllerPort))
		if err := os.MkdirAll(n.dir, 0o700); err != nil {
			return fmt.Errorf("create kafka node dir %s: %w", n.dir, err)
		}
		logPath := filepath.Join(n.dir, "kafka.log")
		if n.log, err = os.OpenFile(logPath, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600); err != nil { //nolint:gosec // our data root
			return fmt.Errorf("open kafka log %s: %w", logPath, err)
		}
	}
	for _, n := range k.nodes {
		props := n.properties(strings.Join(voters, ","), k.cfg.Brokers, k.cfg.Partitions, k.sec)
		if err := os.WriteFile(filepath.Join(n.dir, "server.properties"), []byte(props), 0o600); err != nil {
			return fmt.Errorf("write kafka node %d properties: %w", n.id, err)
		}
	}
	return nil
}

// readOrCreateClusterID returns the KRaft cluster id kept in path, creating
// one (16 random bytes, URL-safe base64, as kafka-storage random-uuid does).
func readOrCreateClusterID(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil { //nolint:gosec // our data root
		return strings.TrimSpace(string(b)), nil
	}
	s := newClusterID()
	if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write kafka cluster id: %w", err)
	}
	return s, nil
}

// newClusterID returns 16 random bytes in URL-safe base64 that do not start
// with "-": the storage tool would read such an id as an option and refuse
// it (one id in 64), so, as Kafka's own Uuid.randomUuid, draw again.
func newClusterID() string {
	for {
		var id [16]byte
		_, _ = rand.Read(id[:]) // never fails (crypto/rand)
		if s := base64.RawURLEncoding.EncodeToString(id[:]); s[0] != '-' {
			return s
		}
	}
}

// start formats and launches every node and waits for the cluster.
func (k *ApacheKafka) start(ctx context.Context) error {
	if err := k.formatAll(ctx); err != nil {
		return err
	}
	offsets := make([]int64, len(k.nodes))
	for i, n := range k.nodes {
		offsets[i] = fileSize(n.log.Name())
		if err := k.launch(n); err != nil {
			return err
		}
	}
	if err := k.waitCluster(ctx); err != nil {
		err = k.notReady(err, offsets)
		for i, n := range k.nodes {
			if bindFailed(n.log, offsets[i]) {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
		}
		return err
	}
	return nil
}

// bindFailed reports whether the node log f says, after offset, that a
// listener could not bind its address (the JVM's BindException).
func bindFailed(f *os.File, offset int64) bool {
	const window = 64 << 10 // the exception is among a failed start's last lines
	buf, err := lastBytes(f, offset, window)
	return err == nil && bytes.Contains(buf, []byte("Address already in use"))
}

// formatAll formats the nodes' storage at once: each format is a JVM start
// of seconds, mostly spent waiting on class loading rather than on the CPU.
func (k *ApacheKafka) formatAll(ctx context.Context) error {
	errs := make([]error, len(k.nodes))
	var wg sync.WaitGroup
	for i, n := range k.nodes {
		wg.Go(func() { errs[i] = k.format(ctx, n, k.clusterID) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// notReady is err with the tail of each node's log written since offsets.
func (k *ApacheKafka) notReady(err error, offsets []int64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "start apache kafka in %s: %v", k.cfg.Dir, err)
	for i, n := range k.nodes {
		fmt.Fprintf(&b, "\n--- node %d: %s; tail of %s ---\n%s", n.id, n.state(), n.log.Name(), fileTail(n.log, offsets[i]))
	}
	return errors.New(b.String()) //nolint:err113 // err is only context here: a broker not ready is no condition to branch on
}

// Addrs returns every broker's client address, 127.0.0.1:port, node 1 first.
func (k *ApacheKafka) Addrs() []string {
	addrs := make([]string, len(k.nodes))
	for i, n := range k.nodes {
		addrs[i] = n.addr()
	}
	return addrs
}

// NodeID returns the node.id (broker id) of node i: i+1.
func (k *ApacheKafka) NodeID(i int) int32 { return int32(k.nodes[i].id) } //nolint:gosec // 1 or 3 nodes

// PID returns the process id of node i's JVM, 0 while it is down.
func (k *ApacheKafka) PID(i int) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if p := k.nodes[i].proc; p != nil {
		return p.cmd.Process.Pid
	}
	return 0
}

// Dir returns the data root (absolute, symlinks resolved).
func (k *ApacheKafka) Dir() string { return k.cfg.Dir }

// Version returns the Apache Kafka release that runs.
func (k *ApacheKafka) Version() string { return k.cfg.Version }

// Close stops every node at once: SIGTERM, then SIGKILL to those not gone
// within 15 s, and returns once no process of the cluster is left. Data
// survives for the next start on the same Dir. It is safe to call more than
// once.
func (k *ApacheKafka) Close() error {
	k.closeOnce.Do(func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		errs := make([]error, len(k.nodes))
		var wg sync.WaitGroup
		for i, n := range k.nodes {
			wg.Go(func() { errs[i] = stopNode(n, kafkaStopGrace) })
		}
		wg.Wait()
		k.closeLogs()
		k.closeErr = errors.Join(errs...)
		k.cfg.Logger.Info("devstack: apache kafka stopped", zap.String("dir", k.cfg.Dir), zap.Error(k.closeErr))
	})
	return k.closeErr
}

// closeLogs closes the parent's descriptors of the node logs.
func (k *ApacheKafka) closeLogs() {
	for _, n := range k.nodes {
		if n.log != nil {
			_ = n.log.Close() // a child holds its own descriptor
		}
	}
}

// Kill sends SIGKILL to node i, as a crash would, and waits until it is gone.
func (k *ApacheKafka) Kill(i int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return killNode(k.nodes[i])
}

// Stop shuts node i down gracefully (SIGTERM: a controlled shutdown moves its
// leaderships away first), killing it if it takes longer than 15 s.
func (k *ApacheKafka) Stop(i int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return stopNode(k.nodes[i], kafkaStopGrace)
}

// Start starts node i again after Kill or Stop, with the same id, ports and
// data, and returns once it answers a metadata request that lists it. Start
// of a running node is a no-op.
func (k *ApacheKafka) Start(ctx context.Context, i int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.nodes[i]
	if n.proc != nil {
		return nil
	}
	offset := fileSize(n.log.Name())
	if err := k.launch(n); err != nil {
		return err
	}
	if err := k.waitNode(ctx, n); err != nil {
		return fmt.Errorf("restart kafka node %d: %w\n--- tail of %s ---\n%s", n.id, err, n.log.Name(), fileTail(n.log, offset))
	}
	return nil
}

// StartAll starts every node that is down, all at once, with the same ids,
// ports and data, and returns once the cluster serves as after
// StartApacheKafka: every broker lists all of them and a transaction
// commits. After every node went down this is the way back: a node started
// alone with Start waits for a controller quorum that needs a majority.
func (k *ApacheKafka) StartAll(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	offsets := make([]int64, len(k.nodes))
	for i, n := range k.nodes {
		offsets[i] = fileSize(n.log.Name())
		if n.proc != nil {
			continue
		}
		if err := k.launch(n); err != nil {
			return err
		}
	}
	if err := k.waitCluster(ctx); err != nil {
		return k.notReady(err, offsets)
	}
	return nil
}

// Pause freezes node i (SIGSTOP): its connections stay open and nothing
// answers, as with a long GC pause or a hung machine. Resume undoes it.
func (k *ApacheKafka) Pause(i int) error { return k.signal(i, syscall.SIGSTOP) }

// Resume lets node i run again after Pause (SIGCONT).
func (k *ApacheKafka) Resume(i int) error { return k.signal(i, syscall.SIGCONT) }

// signal sends sig to node i's process group.
func (k *ApacheKafka) signal(i int, sig syscall.Signal) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := k.nodes[i]
	if n.proc == nil {
		return fmt.Errorf("kafka node %d is not running", n.id)
	}
	if err := syscall.Kill(-n.proc.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("signal kafka node %d: %w", n.id, err)
	}
	return nil
}
