package devstack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaNode is one combined controller+broker: its fixed identity and
// ports, and the process running it (nil while it is down).
type kafkaNode struct {
	id             int // node.id, 1-based
	dir            string
	brokerPort     int
	controllerPort int
	proc           *proc
	launched       time.Time // when proc was started
	log            *os.File  // dir/kafka.log: the JVM's stdout and stderr
}

// state describes node n's process for an error: down, exited (how), or
// its pid and scheduler state (a stopped JVM answers nothing).
func (n *kafkaNode) state() string {
	if n.proc == nil {
		return "down"
	}
	select {
	case <-n.proc.exited:
		return fmt.Sprintf("exited (%v)", n.proc.err)
	default:
	}
	pid := n.proc.cmd.Process.Pid
	return fmt.Sprintf("pid %d, state %s", pid, processState(pid))
}

// addr is the broker's client address.
func (n *kafkaNode) addr() string { return "127.0.0.1:" + strconv.Itoa(n.brokerPort) }

// properties renders the node's server.properties. voters is
// controller.quorum.voters; rf is the cluster size; sec is the client
// listener's security.
func (n *kafkaNode) properties(voters string, rf, partitions int, sec listenerSecurity) string {
	minISR := min(rf, 2) // 2 of 3: one broker may fail without refusing acks=all writes
	listener := sec.protocol()
	lines := []string{
		"process.roles=broker,controller",
		"node.id=" + strconv.Itoa(n.id),
		"controller.quorum.voters=" + voters,
		fmt.Sprintf("listeners=%s://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", listener, n.brokerPort, n.controllerPort),
		"advertised.listeners=" + listener + "://" + n.addr(),
		"controller.listener.names=CONTROLLER",
		"listener.security.protocol.map=" + listener + ":" + listener + ",CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name=" + listener,
		"log.dirs=" + filepath.Join(n.dir, "data"),
		"num.partitions=" + strconv.Itoa(partitions),
		"default.replication.factor=" + strconv.Itoa(rf),
		"min.insync.replicas=" + strconv.Itoa(minISR),
		"offsets.topic.replication.factor=" + strconv.Itoa(rf),
		"transaction.state.log.replication.factor=" + strconv.Itoa(rf),
		"transaction.state.log.min.isr=" + strconv.Itoa(minISR),
		// 12 instead of 50 internal partitions: a third of the start-up work
		// on 2 cores, and still more than a dev stack's groups and producers.
		"offsets.topic.num.partitions=12",
		"transaction.state.log.num.partitions=12",
		// No wait for more members before a group's first rebalance: tests
		// start one consumer at a time.
		"group.initial.rebalance.delay.ms=0",
		// A killed broker is fenced after 6 s instead of 9 s, so failover
		// tests are quicker; still above a GC pause on a loaded 2-core box.
		"broker.session.timeout.ms=6000",
		"broker.heartbeat.interval.ms=1000",
		// Few threads: a dev broker on a 2-core machine serves few clients.
		"num.network.threads=2",
		"num.io.threads=4",
		"num.recovery.threads.per.data.dir=1",
		"auto.create.topics.enable=true",
	}
	if sec.sasl != nil {
		lines = append(lines, sec.sasl.properties(listener)...)
	}
	if sec.tls != nil {
		lines = append(lines, sec.tls.properties(listener)...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// kafkaLog4j sends every log line to stdout, that is dir/kafka.log; the
// request and state-change loggers are chatty at INFO and stay at WARN.
const kafkaLog4j = `status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.state.name = state.change.logger
logger.state.level = WARN
`

// jvmTmpDir is the brokers' java.io.tmpdir under the data root. A broker
// unpacks native libraries there (snappy-java, zstd-jni: a few hundred KB
// at each start) and deletes them only when it exits cleanly, so a node
// killed by the chaos tests or by its parent's death would otherwise leave
// them in the machine's /tmp for good.
const jvmTmpDir = "tmp"

// javaArgs are the arguments that run main with the node's config.
func (k *ApacheKafka) javaArgs(main string, args ...string) []string {
	a := append([]string(nil), k.cfg.JVMOpts...)
	a = append(a, "-Djava.awt.headless=true", "-Djava.io.tmpdir="+filepath.Join(k.cfg.Dir, jvmTmpDir),
		"-Dlog4j2.configurationFile="+filepath.Join(k.cfg.Dir, "log4j2.properties"),
		"-cp", filepath.Join(k.cfg.JarsDir, "*"), main)
	return append(a, args...)
}

// format writes the node's KRaft storage unless it is formatted already.
func (k *ApacheKafka) format(ctx context.Context, n *kafkaNode, clusterID string) error {
	if _, err := os.Stat(filepath.Join(n.dir, "data", "meta.properties")); err == nil {
		return nil
	}
	args := k.javaArgs("kafka.tools.StorageTool", "format", "-t", clusterID,
		"-c", filepath.Join(n.dir, "server.properties"))
	cmd := exec.CommandContext(ctx, k.java, args...) //nolint:gosec // java is found on $PATH or configured, the args are ours
	cmd.Dir, cmd.Stdout, cmd.Stderr = n.dir, n.log, n.log
	cmd.SysProcAttr = sysProcAttrKillOnParentDeath()
	offset := fileSize(n.log.Name())
	if err := runLocked(cmd); err != nil {
		return fmt.Errorf("format kafka node %d storage in %s: %w\n--- tail of %s ---\n%s",
			n.id, n.dir, err, n.log.Name(), fileTail(n.log, offset))
	}
	return nil
}

// launch starts node n's JVM; it does not wait for it to be ready.
func (k *ApacheKafka) launch(n *kafkaNode) error {
	_, _ = fmt.Fprintf(n.log, "--- devstack %s: starting kafka node %d on %s ---\n",
		time.Now().Format(time.RFC3339), n.id, n.addr())
	cmd := exec.Command(k.java, k.javaArgs("kafka.Kafka", filepath.Join(n.dir, "server.properties"))...) //nolint:noctx,gosec // the broker outlives the start context; Stop ends it
	cmd.Dir, cmd.Stdout, cmd.Stderr = n.dir, n.log, n.log
	cmd.SysProcAttr = sysProcAttrKillOnParentDeath()
	p, err := startLocked(cmd)
	if err != nil {
		return fmt.Errorf("kafka node %d: %w", n.id, err)
	}
	n.proc, n.launched = p, time.Now()
	return nil
}

// stopNode sends SIGTERM (a controlled shutdown: leadership moves away
// first), then SIGKILL once grace has passed, and waits until the node's
// processes are gone.
func stopNode(n *kafkaNode, grace time.Duration) error {
	if n.proc == nil {
		return nil
	}
	p := n.proc
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT) // a paused JVM cannot handle SIGTERM
	err := p.cmd.Process.Signal(syscall.SIGTERM)
	_ = err // os.ErrProcessDone: it already exited; leftovers are handled below
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.exited:
		err = awaitServerGone(p.cmd.Process.Pid, n.dir, 0)
	case <-timer.C:
		err = p.hardStop(n.dir)
	}
	n.proc = nil
	if err != nil {
		return fmt.Errorf("stop kafka node %d: %w", n.id, err)
	}
	return nil
}

// killNode sends SIGKILL and waits until the node's processes are gone.
func killNode(n *kafkaNode) error {
	if n.proc == nil {
		return nil
	}
	err := n.proc.hardStop(n.dir)
	n.proc = nil
	if err != nil {
		return fmt.Errorf("kill kafka node %d: %w", n.id, err)
	}
	return nil
}

// listenerSecurity is what the brokers' client listener requires: nil
// fields for plain PLAINTEXT.
type listenerSecurity struct {
	sasl *saslSetup
	tls  *tlsSetup
}

// protocol is the listener's security protocol, which is also its name.
func (s listenerSecurity) protocol() string {
	switch {
	case s.sasl != nil && s.tls != nil:
		return "SASL_SSL"
	case s.sasl != nil:
		return "SASL_PLAINTEXT"
	case s.tls != nil:
		return "SSL"
	}
	return "PLAINTEXT"
}

// clientOpts are the options a devstack client needs to reach the brokers:
// TLS, and the internal user's sign-in.
func (s listenerSecurity) clientOpts() []kgo.Opt {
	var opts []kgo.Opt
	if s.tls != nil {
		opts = append(opts, s.tls.dial())
	}
	if s.sasl != nil {
		opts = append(opts, kgo.SASL(s.sasl.internal()))
	}
	return opts
}
