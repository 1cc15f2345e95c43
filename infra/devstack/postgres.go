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

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// Postgres is a running PostgreSQL server started by StartPostgres. The
// superuser is "postgres" with a generated password (scram-sha-256), kept in
// Dir/superuser.password (0600) so a restart on the same Dir resumes; DSN
// carries it. No connection without it is accepted, TCP or socket.
type Postgres struct {
	dir      string
	pgdata   string
	password string
	port     int
	version  int // server_version_num, e.g. 150018
	logger   *zap.Logger
	proc     *proc
	log      *os.File
	stopOnce sync.Once
	stopErr  error
}

// setup is what launching a server needs, resolved from PostgresConfig.
type setup struct {
	dir, pgdata, binDir string
	password            string
	cred                *syscall.Credential // nil: run as ourselves
	logger              *zap.Logger
	log                 *os.File // Dir/postgres.log, shared by initdb and postgres
}

// Timeouts of the start sequence.
const (
	// readyTimeout bounds the wait for a started server to accept
	// connections; it is ready in ~0.2 s here, 30 s covers a loaded CI box.
	readyTimeout = 30 * time.Second
	// readyPoll is the interval between connection attempts while starting.
	readyPoll = 20 * time.Millisecond
	// pingTimeout bounds one connection attempt, in case something that is
	// not our server accepts on the port and never answers.
	pingTimeout = 2 * time.Second
	// autoPortAttempts is how often a server on a picked port is tried: the
	// port can be taken by someone else between FreePort and bind.
	autoPortAttempts = 3
	// maxSocketPath is the longest unix socket path Linux accepts (108
	// bytes with the NUL), minus the name ".s.PGSQL.65535.lock".
	maxSocketPath = 107 - len("/.s.PGSQL.65535.lock")
)

// errExitedEarly means the server process ended before accepting connections.
var errExitedEarly = errors.New("postgres exited before accepting connections")

// StartPostgres starts a PostgreSQL server on cfg.Dir, running initdb first
// when Dir/pgdata holds no cluster, and returns once it accepts connections
// on 127.0.0.1. ctx bounds the start only; the server runs until Stop. If the
// binaries are missing the error matches ErrPostgresMissing; if the server
// does not come up the error carries the tail of Dir/postgres.log.
func StartPostgres(ctx context.Context, cfg PostgresConfig) (*Postgres, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := newSetup(cfg)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	pg, err := startServer(ctx, s, cfg.Port)
	if err != nil {
		_ = s.log.Close() // the start error is what matters
		return nil, err
	}
	if err := pg.closeTrust(ctx); err != nil {
		_ = pg.Stop(ctx) // the trust error is what matters
		return nil, fmt.Errorf("postgres in %s: %w", s.dir, err)
	}
	cfg.Logger.Info("devstack: postgres ready", zap.String("dir", s.dir),
		zap.Int("port", pg.port), zap.Duration("took", time.Since(started)))
	return pg, nil
}

// newSetup finds the binaries and prepares the data root and its log.
func newSetup(cfg PostgresConfig) (*setup, error) {
	binDir, err := findBinDir(cfg.BinDir)
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	dir, err := prepareDir(cfg.Dir, cred, cfg.Logger)
	if err != nil {
		return nil, err
	}
	password, err := superuserPassword(dir)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	log, err := os.OpenFile(logPath, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open server log %s: %w", logPath, err)
	}
	return &setup{dir: dir, pgdata: filepath.Join(dir, "pgdata"), binDir: binDir, password: password,
		cred: cred, logger: cfg.Logger, log: log}, nil
}

// startServer initialises the cluster if needed and launches the server,
// retrying on a new port when the port was picked automatically.
func startServer(ctx context.Context, s *setup, port int) (*Postgres, error) {
	if err := initCluster(ctx, s); err != nil {
		return nil, err
	}
	attempts := 1
	if port == 0 {
		attempts = autoPortAttempts
	}
	return launchRetrying(attempts, errExitedEarly, func() (*Postgres, error) {
		p := port
		if p == 0 {
			var err error
			if p, err = FreePort(); err != nil {
				return nil, err
			}
		}
		if err := clearStalePID(s); err != nil {
			return nil, err
		}
		return launch(ctx, s, p)
	})
}

// launch starts postgres on port and waits until it accepts connections.
func launch(ctx context.Context, s *setup, port int) (*Postgres, error) {
	offset, err := s.log.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("seek server log: %w", err)
	}
	_, _ = fmt.Fprintf(s.log, "--- devstack %s: starting postgres on 127.0.0.1:%d ---\n",
		time.Now().Format(time.RFC3339), port)
	cmd := exec.Command(filepath.Join(s.binDir, "postgres"), serverArgs(s, port)...) //nolint:noctx // the server outlives the start context; Stop ends it
	cmd.Dir, cmd.Stdout, cmd.Stderr = s.dir, s.log, s.log
	cmd.SysProcAttr = sysProcAttr(s.cred)
	pr, err := startLocked(cmd)
	if err != nil {
		return nil, err
	}
	pg := &Postgres{dir: s.dir, pgdata: s.pgdata, password: s.password, port: port, logger: s.logger, proc: pr, log: s.log}
	if err := pg.waitReady(ctx); err != nil {
		_ = pr.hardStop(s.pgdata) // best effort; the start error is what matters
		return nil, fmt.Errorf("start postgres in %s on port %d: %w\n--- tail of %s ---\n%s",
			s.dir, port, err, s.log.Name(), fileTail(s.log, offset))
	}
	return pg, nil
}

// serverArgs are the postgres command-line arguments.
func serverArgs(s *setup, port int) []string {
	sockets := s.dir
	if len(sockets) > maxSocketPath {
		sockets = "" // path too long for a unix socket: TCP only
	}
	return []string{
		"-D", s.pgdata, "-p", strconv.Itoa(port), "-k", sockets,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=200",
		// Throwaway data: durability off for speed (see package doc).
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
	}
}

// waitReady polls a connection until it reaches this server, the process
// exits, or readyTimeout (or ctx) expires.
func (p *Postgres) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	go func() { // a connection attempt must not outlive the process
		select {
		case <-p.proc.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		err := p.ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.proc.exited:
			return fmt.Errorf("%w: %w", errExitedEarly, p.proc.err)
		case <-ctx.Done():
			select { // the watcher above cancels ctx when the process exits
			case <-p.proc.exited:
				return fmt.Errorf("%w: %w", errExitedEarly, p.proc.err)
			default:
			}
			return fmt.Errorf("not accepting connections: %w (last attempt: %w)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// ping connects and checks that the server answering on the port is this
// one: a picked port may have been taken by another server meanwhile.
func (p *Postgres) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.DSN("postgres"))
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close(ctx) }()
	var dataDir string
	err = conn.QueryRow(ctx, `SELECT current_setting('data_directory'),
		current_setting('server_version_num')::int`).Scan(&dataDir, &p.version)
	if err != nil {
		return fmt.Errorf("read server settings: %w", err)
	}
	if dataDir != p.pgdata {
		return fmt.Errorf("port %d is served by another postgres (data directory %s)", p.port, dataDir)
	}
	return nil
}
