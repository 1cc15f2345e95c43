package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// A session's directory (sessions/<s>: its context and its runs) is used by
// every run of the session, and those may run in more than one executor
// process sharing the base directory (a partition handed over while its
// old owner's run still ends). Each layout that creates something in it
// holds a shared flock on it until the run's last handle closes; the
// directory is removed, or handed on as the key's spare session directory,
// only under an exclusive flock, which no run of the session then holds.
// Without it, the last run of a session in one process could remove the
// context another process has bind-mounted for a run of the same session
// (its writes would fail), or move it to another session. flock is taken
// on the directory itself, which the executor owns and no sandbox sees: a
// sandbox cannot hold it. A lock dies with its process: no stale locks.

// spareSessionRel is the key directory's spare session directory: a
// session's directory that held nothing but its empty context and runs
// directories when its last run ended, handed on to the key's next run of
// a new session (every create without a session is one) instead of being
// removed and created again.
const spareSessionRel = "spare-session"

// Waiting for a lock: another process's tidy holds the exclusive lock for a
// few system calls, and a process forked from one holding a lock shares it
// until it execs. lockTries tries, lockPause apart, bound the wait, so that
// a process holding it for long (the local provider's commands see host
// paths) cannot stall this one; past them lockSession goes on unlocked and
// tidySessionDir keeps the directory.
const (
	lockTries = 50
	lockPause = time.Millisecond
)

// lockSession makes sure the session's directory exists, taking the key's
// spare session directory for it when it does not, and takes a shared lock
// on it, before this layout creates anything in it; under l.mu. The lock is
// the directory's at its path: one that another process's tidy moved or
// removed between the open and the lock is left and the path tried again.
// A filesystem without flock leaves the layout unlocked, and every tidy
// then keeps the session's directory, as a busy lock does.
func (l *Layout) lockSession(key *os.Root) error {
	l.locked = true
	sess := filepath.FromSlash(l.sessRel)
	for range lockTries {
		if _, err := key.Lstat(sess); errors.Is(err, fs.ErrNotExist) &&
			key.Rename(spareSessionRel, sess) != nil { // with its context and runs
			if err := key.MkdirAll(sess, 0o755); err != nil {
				return fmt.Errorf("create the session's directory: %w", fileErr(err))
			}
		}
		f, err := key.Open(sess)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since by another process's tidy
		}
		if err != nil {
			return fmt.Errorf("open the session's directory: %w", fileErr(err))
		}
		err = flock(f, unix.LOCK_SH|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			_ = f.Close()
			time.Sleep(lockPause)
			continue
		}
		if err != nil {
			_ = f.Close()
			return nil // no locks here: nothing is ever tidied either
		}
		if isAt(key, sess, f) {
			l.lock = f
			return nil
		}
		_ = f.Close()
	}
	return nil
}

// unlockSession lets go of the layout's lock on its session's directory;
// under l.mu.
func (l *Layout) unlockSession() {
	if l.lock != nil {
		_ = l.lock.Close()
	}
	l.lock, l.locked = nil, false
}

// letGo lets go of the layout's lock on its session's directory, as the
// run's last handle does in tidy, for a handle that is not its run's last.
func (l *Layout) letGo() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unlockSession()
}

// tidySession tidies the layout's session directory (tidySessionDir), if
// it has one; not under l.mu, nor under the provider's lock: it may wait.
func (l *Layout) tidySession() {
	if l.sessionless() {
		return
	}
	key, err := os.OpenRoot(l.keyDir)
	if err != nil {
		return // a destroyed key
	}
	defer func() { _ = key.Close() }()
	tidySessionDir(key, filepath.FromSlash(l.sessRel))
}

// tidySessionDir removes session directory sess (below key), its context
// and its runs directory when all are empty and no run of the session holds
// it (here or in another process), or hands it on as the key's spare
// session directory when the key has none and the context kept the mode it
// was created with. Anything else keeps what is there: a context or runs
// directory with entries, a lock another run holds. A busy lock is tried
// again, lockTries times lockPause apart: a process this one forks shares
// its descriptors until it execs (they are close-on-exec), so a command
// started by another run here can hold a copy of a run's lock for a moment
// after the run let go of it.
func tidySessionDir(key *os.Root, sess string) {
	f, err := key.Open(sess)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }()
	for try := 1; ; try++ {
		err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || try == lockTries {
			return // a run of the session still uses it, or no locks here
		}
		time.Sleep(lockPause)
	}
	if !isAt(key, sess, f) {
		return // it moved
	}
	names, err := dirNames(key, sess, 3)
	if err != nil || len(names) > 2 {
		return
	}
	ctx, runs := filepath.Join(sess, "context"), filepath.Join(sess, "runs")
	spare := true
	for _, name := range names {
		switch name {
		case "context":
			spare = spare && emptyDirLike(key, ctx, sess)
		case "runs":
			spare = spare && emptyDirLike(key, runs, sess)
		default:
			return
		}
	}
	if spare {
		if _, err := key.Lstat(spareSessionRel); errors.Is(err, fs.ErrNotExist) && key.Rename(sess, spareSessionRel) == nil {
			return
		}
	}
	_ = key.Remove(ctx) // ENOENT, ENOTEMPTY: keep
	_ = key.Remove(runs)
	_ = key.Remove(sess)
}

// emptyDirLike reports whether dir (below root) is an empty directory with
// the mode of directory like.
func emptyDirLike(root *os.Root, dir, like string) bool {
	fi, err := root.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	li, err := root.Lstat(like)
	if err != nil || fi.Mode() != li.Mode() {
		return false
	}
	names, err := dirNames(root, dir, 1)
	return err == nil && len(names) == 0
}

// flock applies how (unix.LOCK_*) to f, again when interrupted.
func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how) // #nosec G115 -- a descriptor fits an int
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// isAt reports whether open directory f is what name (below root) is now.
func isAt(root *os.Root, name string, f *os.File) bool {
	at, err := root.Lstat(name)
	if err != nil {
		return false
	}
	fi, err := f.Stat()
	return err == nil && os.SameFile(at, fi)
}
