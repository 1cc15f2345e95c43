package devstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// ClickHouse is a running ClickHouse server started by StartClickHouse,
// listening on 127.0.0.1 with user "default" and a generated password
// (Password), kept in Dir/default.password (0600) so a restart on the same
// Dir resumes. A connection without it is refused.
//
// The server is a direct child process in its own process group; Stop ends
// the group and waits for it, and on Linux the server receives SIGINT (its
// graceful shutdown) when the OS thread that started it dies, so it does not
// outlive a crashed or killed caller. Data in Dir survives Stop and is used
// by the next start on the same Dir.
type ClickHouse struct {
	dir      string
	password string
	tcpPort  int
	httpPort int
	version  string
	logger   *zap.Logger
	proc     *proc
	out      *os.File // Dir/clickhouse.out: the server's stdout and stderr
	stopOnce sync.Once
	stopErr  error
}

// clickHouseSetup is what launching a server needs, resolved from the config.
type clickHouseSetup struct {
	dir      string
	password string
	bin      string
	args     []string // before --config-file
	logger   *zap.Logger
	out      *os.File
}

// errClickHouseExited means the server process ended before it was ready,
// typically because one of its ports was taken.
var errClickHouseExited = errors.New("clickhouse exited before accepting connections")

// StartClickHouse starts a ClickHouse server on cfg.Dir with a generated
// configuration and returns once it answers queries on both ports. ctx
// bounds the start only; the server runs until Stop. If the binary is
// missing the error matches ErrClickHouseMissing; if the server does not come
// up the error carries the tail of its error log.
func StartClickHouse(ctx context.Context, cfg ClickHouseConfig) (*ClickHouse, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := newClickHouseSetup(cfg)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	attempts := 1
	if cfg.TCPPort == 0 && cfg.HTTPPort == 0 {
		// Either picked port may have been taken before the server bound
		// it; with a fixed port, a taken one is the likelier cause.
		attempts = autoPortAttempts
	}
	ch, err := launchRetrying(attempts, errClickHouseExited, func() (*ClickHouse, error) {
		return s.launchOnPorts(ctx, cfg.TCPPort, cfg.HTTPPort)
	})
	if err != nil {
		_ = s.out.Close() // the start error is what matters
		return nil, err
	}
	cfg.Logger.Info("devstack: clickhouse ready", zap.String("dir", s.dir), zap.String("version", ch.version),
		zap.Int("tcp_port", ch.tcpPort), zap.Int("http_port", ch.httpPort), zap.Duration("took", time.Since(started)))
	return ch, nil
}

// newClickHouseSetup finds the binary and prepares the data root.
func newClickHouseSetup(cfg ClickHouseConfig) (*clickHouseSetup, error) {
	bin, args, err := clickHouseBinary(cfg.Binary)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data root %s: %w", cfg.Dir, err)
	}
	dir, err := filepath.EvalSymlinks(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolve data root %s: %w", cfg.Dir, err)
	}
	password, err := readOrCreateSecret(filepath.Join(dir, clickHousePasswordFile))
	if err != nil {
		return nil, fmt.Errorf("clickhouse password: %w", err)
	}
	outPath := filepath.Join(dir, "clickhouse.out")
	out, err := os.OpenFile(outPath, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open server output %s: %w", outPath, err)
	}
	return &clickHouseSetup{dir: dir, password: password, bin: bin, args: args, logger: cfg.Logger, out: out}, nil
}

// launchOnPorts fills in free ports for the zero ones and launches.
func (s *clickHouseSetup) launchOnPorts(ctx context.Context, tcpPort, httpPort int) (*ClickHouse, error) {
	var err error
	for tcpPort == 0 || httpPort == 0 || tcpPort == httpPort {
		p, perr := FreePort()
		if perr != nil {
			return nil, perr
		}
		switch {
		case tcpPort == 0:
			tcpPort = p
		case httpPort == 0 || httpPort == tcpPort:
			httpPort = p
		}
	}
	if err = writeClickHouseConfig(s.dir, s.password, tcpPort, httpPort); err != nil {
		return nil, err
	}
	return s.launch(ctx, tcpPort, httpPort)
}

// launch starts the server and waits until it is ready.
func (s *clickHouseSetup) launch(ctx context.Context, tcpPort, httpPort int) (*ClickHouse, error) {
	errLog := filepath.Join(s.dir, "log", "server.err.log")
	offset := fileSize(errLog)
	_, _ = fmt.Fprintf(s.out, "--- devstack %s: starting clickhouse on 127.0.0.1:%d (http %d) ---\n",
		time.Now().Format(time.RFC3339), tcpPort, httpPort)
	args := append(append([]string(nil), s.args...), "--config-file="+filepath.Join(s.dir, "config.xml"))
	cmd := exec.Command(s.bin, args...) //nolint:noctx,gosec // the server outlives the start context; Stop ends it. bin is found, not user input
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, s.out, s.out
	cmd.SysProcAttr = sysProcAttr(nil)
	pr, err := startLocked(cmd)
	if err != nil {
		return nil, err
	}
	ch := &ClickHouse{dir: s.dir, password: s.password, tcpPort: tcpPort, httpPort: httpPort, logger: s.logger, proc: pr, out: s.out}
	if err := ch.waitReady(ctx); err != nil {
		_ = pr.hardStop(s.dir) // best effort; the start error is what matters
		return nil, fmt.Errorf("start clickhouse in %s on ports %d/%d: %w\n--- tail of %s ---\n%s",
			s.dir, tcpPort, httpPort, err, errLog, tailOfFile(errLog, offset))
	}
	return ch, nil
}

// waitReady polls the server until it answers as this server, the process
// exits, or readyTimeout (or ctx) expires.
func (c *ClickHouse) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		err := c.ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-c.proc.exited:
			return fmt.Errorf("%w: %w", errClickHouseExited, c.proc.err)
		case <-ctx.Done():
			return fmt.Errorf("not accepting connections: %w (last attempt: %w)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// Addr returns the native-protocol address, 127.0.0.1:port.
func (c *ClickHouse) Addr() string { return "127.0.0.1:" + strconv.Itoa(c.tcpPort) }

// TCPPort returns the native-protocol port on 127.0.0.1.
func (c *ClickHouse) TCPPort() int { return c.tcpPort }

// HTTPPort returns the HTTP port on 127.0.0.1.
func (c *ClickHouse) HTTPPort() int { return c.httpPort }

// Dir returns the data root (absolute, symlinks resolved).
func (c *ClickHouse) Dir() string { return c.dir }

// Password returns the password of user "default". It is a secret: never
// print or log it.
func (c *ClickHouse) Password() string { return c.password }

// Version returns the server version, e.g. "18.16.1".
func (c *ClickHouse) Version() string { return c.version }

// Stop shuts the server down: SIGTERM (it finishes running queries and
// flushes), then SIGKILL to its process group if it has not exited within
// 10 s or when ctx ends. Data inserted before Stop survives either way:
// ClickHouse writes each insert to disk before acknowledging it. It is safe
// to call more than once.
func (c *ClickHouse) Stop(ctx context.Context) error {
	c.stopOnce.Do(func() { c.stopErr = c.stop(ctx) })
	return c.stopErr
}

func (c *ClickHouse) stop(ctx context.Context) error {
	defer func() { _ = c.out.Close() }() // the child holds its own descriptor
	err := c.proc.shutdown(ctx, syscall.SIGTERM, c.dir, func() {
		c.logger.Warn("devstack: clickhouse ignored SIGTERM; killing", zap.String("dir", c.dir))
	})
	if err != nil {
		return fmt.Errorf("stop clickhouse in %s: %w", c.dir, err)
	}
	c.logger.Info("devstack: clickhouse stopped", zap.String("dir", c.dir), zap.NamedError("exit", c.proc.err))
	return nil
}

// fileSize returns the size of path, 0 when it does not exist.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// tailOfFile returns the last lines of path written after offset.
func tailOfFile(path string, offset int64) string {
	f, err := os.Open(path) //nolint:gosec // a log file in the data root we created
	if err != nil {
		return "(no server error log: " + err.Error() + ")"
	}
	defer func() { _ = f.Close() }()
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return "(server error log unreadable: " + err.Error() + ")"
	}
	return fileTail(f, offset)
}
