package devstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// initdbTimeout bounds initdb, which takes ~0.5 s here; a minute leaves room
// for slow CI disks without hanging a test run forever.
const initdbTimeout = time.Minute

// initCluster runs initdb unless pgdata already holds a cluster. A pgdata
// without PG_VERSION is the remains of an interrupted initdb and is removed.
func initCluster(ctx context.Context, s *setup) error {
	_, err := os.Stat(filepath.Join(s.pgdata, "PG_VERSION"))
	if err == nil {
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("inspect %s: %w", s.pgdata, err)
	}
	if err := os.RemoveAll(s.pgdata); err != nil {
		return fmt.Errorf("remove incomplete cluster %s: %w", s.pgdata, err)
	}
	ctx, cancel := context.WithTimeout(ctx, initdbTimeout)
	defer cancel()
	started := time.Now()
	var out bytes.Buffer
	pwfile, err := s.initdbPasswordFile()
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(pwfile) }() // initdb has read it; the saved copy is superuser.password
	cmd := s.command(ctx, "initdb", "-D", s.pgdata, "-U", "postgres", "--auth=scram-sha-256", "--pwfile="+pwfile,
		"-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	cmd.Stdout = io.MultiWriter(&out, s.log)
	cmd.Stderr = cmd.Stdout
	if err := runLocked(cmd); err != nil {
		return fmt.Errorf("initdb %s: %w\n%s", s.pgdata, err, tail(out.Bytes(), tailLines))
	}
	s.logger.Info("devstack: initialised postgres cluster",
		zap.String("dir", s.pgdata), zap.Duration("took", time.Since(started)))
	return nil
}

// initdbPasswordFile writes the superuser password where initdb, running
// as the server user, can read it and nobody else can: a 0600 file of that
// user in the data root. (A pipe on stdin does not do: the server user may
// not reopen our /dev/stdin.) The password never appears in an argument.
func (s *setup) initdbPasswordFile() (string, error) {
	path := filepath.Join(s.dir, ".initdb-password")
	if err := os.WriteFile(path, []byte(s.password+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write initdb password file: %w", err)
	}
	if s.cred != nil {
		if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return "", fmt.Errorf("chown initdb password file to %s: %w", serverUser, err)
		}
	}
	return path, nil
}

// command builds a command for a PostgreSQL binary running as the server
// user, in its own process group; cancelling ctx kills the group.
func (s *setup) command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.binDir, bin), args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = sysProcAttr(s.cred)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// clearStalePID removes pgdata/postmaster.pid unless it names a live server
// for this pgdata. PostgreSQL itself ignores a pid file whose process is
// dead, but refuses to start when the PID was reused by an unrelated process
// after an unclean stop; that is the case handled here.
func clearStalePID(s *setup) error {
	path := filepath.Join(s.pgdata, "postmaster.pid")
	pid, err := pidFromFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		args, known := processCmdline(pid)
		if !known && processAlive(pid) {
			return nil // cannot tell; let postgres decide
		}
		if known && isServerFor(args, s.pgdata) {
			return fmt.Errorf("data dir %s is in use by a running postgres (PID %d); stop it first", s.pgdata, pid)
		}
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale %s: %w", path, err)
	}
	// Children of a dead postmaster keep its shared memory attached for a
	// moment, and postgres refuses to start while they do.
	if err := awaitServerGone(0, s.pgdata, 0); err != nil {
		return fmt.Errorf("end processes left by the previous server on %s: %w", s.pgdata, err)
	}
	s.logger.Warn("devstack: removed stale postmaster.pid", zap.String("dir", s.pgdata), zap.Int("pid", pid))
	return nil
}

// pidFromFile reads the PID on the first line of a postmaster.pid. An
// unparsable file yields an error that is not fs.ErrNotExist.
func pidFromFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("no PID in %s", path)
	}
	return pid, nil
}

// processAlive reports whether pid exists (EPERM means it does).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// isServerFor reports whether argv is a postgres server on pgdata.
func isServerFor(args []string, pgdata string) bool {
	if len(args) == 0 {
		return false
	}
	base := filepath.Base(args[0])
	if base != "postgres" && base != "postmaster" {
		return false
	}
	for _, a := range args[1:] {
		if a == pgdata {
			return true
		}
	}
	return false
}
