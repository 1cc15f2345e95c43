package sandbox

import (
	"errors"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// mechUsage is how LimitError names the workspace check.
const mechUsage = "usage check"

// A workspace check that cannot measure the key's usage counts it as over
// the limit until it can. mechUnreadable names the commonest cause, a
// directory whose permissions a command took away; mechUnknown any other
// (a tree that kept moving, no descriptor left).
const (
	mechUnreadable = "usage check: a directory below the workspace cannot be read"
	mechUnknown    = "usage check: the usage could not be measured"
)

// checkWrite refuses a write of n bytes to sandbox path p that would take
// the key's directories past the workspace limit.
func (b *boxLimits) checkWrite(l *Layout, m *usageMeter, p string, n int) error {
	limit := b.limits.WorkspaceBytes
	if limit <= 0 {
		return nil
	}
	replaced := l.fileBytes(p)
	return workspaceLimit(limit, m.fits(l.keyDir, limit, max(int64(n), entryMinBytes)-replaced))
}

// checkUsage reports when the key's directories exceed the workspace
// limit, after a command: the files stay (so the run can remove them), and
// every further write is refused until they fit.
func (b *boxLimits) checkUsage(l *Layout, m *usageMeter) error {
	limit := b.limits.WorkspaceBytes
	if limit <= 0 {
		return nil
	}
	return workspaceLimit(limit, m.fits(l.keyDir, limit, 0))
}

// overUsage is the check of a running command (watch): whether the key is
// over the workspace limit for certain. An unknown usage is not, there: a
// command may take a directory's permissions away for a while; checkUsage
// tells once it ended. Nil without a limit.
func (b *boxLimits) overUsage(l *Layout, m *usageMeter) func() bool {
	limit := b.limits.WorkspaceBytes
	if limit <= 0 {
		return nil
	}
	return func() bool { return errors.Is(m.fits(l.keyDir, limit, 0), errOverLimit) }
}

// workspaceLimit is the error of a check that fit or not (fits' answer).
func workspaceLimit(limit int64, fit error) error {
	switch {
	case fit == nil:
		return nil
	case errors.Is(fit, errOverLimit):
		return &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: limit, Mechanism: mechUsage}
	case errors.Is(fit, unix.EACCES), errors.Is(fit, unix.EPERM):
		return &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: limit, Mechanism: mechUnreadable}
	default:
		return &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: limit, Mechanism: mechUnknown}
	}
}

// errOverLimit is fits' answer for a usage over the limit.
var errOverLimit = errors.New("over the workspace limit")

// A key's usage is the blocks allocated below its directory, found by a
// walk that stats every entry: about 2–5 µs an entry, so 0.1–0.3 s for a
// workspace of 50,000 files, after every command and before every write.
// The provider keeps one usageMeter per key with open handles, which
// walks a small key at every check, exactly, and a large one (more than
// walkExactEntries entries) at most once per walkEvery for each
// walkExactEntries entries it had: in between, the last walk plus what
// WriteFile added since stands for the usage. It never refuses on that
// estimate: a check it would fail walks again first. So a key over the
// limit is told at once (its writes refused, a command's LimitError), a
// run that removed files is let write again at once, and a command that
// grew a large key past the limit is told by a later check, at most that
// interval afterwards (a running command is checked every usagePoll, so it
// may overshoot the limit by what it writes in between).
const (
	walkExactEntries = 10_000
	walkEvery        = time.Second
)

// usageMeter is a key's measured usage (see walkExactEntries).
type usageMeter struct {
	mu      sync.Mutex
	bytes   int64     // at the last walk, plus what was written since
	entries int       // entries the last walk visited
	at      time.Time // of the last walk; zero: none yet
	now     func() time.Time
}

func newUsageMeter() *usageMeter { return &usageMeter{now: time.Now} }

// fits reports whether the key's usage plus delta bytes stays within limit
// (nil), and counts delta as used when it does. Otherwise it answers
// errOverLimit, or why the usage could not be measured: an unknown usage
// does not fit, and is walked again at the next check.
func (m *usageMeter) fits(dir string, limit, delta int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stale() || m.bytes+delta > limit {
		bytes, entries, err := usage(dir)
		if err != nil {
			m.at = time.Time{}
			return err
		}
		m.bytes, m.entries, m.at = bytes, entries, m.now()
	}
	if m.bytes+delta > limit {
		return errOverLimit
	}
	m.bytes += max(delta, 0)
	return nil
}

// stale reports whether the last walk no longer stands for the usage.
func (m *usageMeter) stale() bool {
	if m.at.IsZero() || m.entries <= walkExactEntries {
		return true
	}
	return m.now().Sub(m.at) >= time.Duration(m.entries/walkExactEntries)*walkEvery
}

// entryMinBytes is what an entry counts at least toward the workspace
// limit: one filesystem block. An empty file, a short symlink or a device
// node allocates no block, but takes an inode; counted as nothing, millions
// of them would fit the limit and run the host's filesystem out of inodes.
// At this size the default limit (1 GiB) holds at most 262,144 entries.
const entryMinBytes = 4096

// entryBytes is what the entry st describes counts toward the limit: the
// blocks it allocates (st_blocks, so a sparse file counts what it really
// occupies), at least entryMinBytes.
func entryBytes(st *unix.Stat_t) int64 { return max(st.Blocks*512, entryMinBytes) }

// usage is the space everything below dir counts toward the limit
// (entryBytes; directories count too), and the number of entries it
// visited; a dir that does not exist uses nothing. It walks by descriptor
// (openat, fstatat), never by path: a walk by path loses whatever lies
// deeper than PATH_MAX, where a command could keep any amount. It follows
// no symlink, and skips entries removed or replaced while it reads. It
// fails, the usage unknown, on a directory it may not read (a command can
// take its permissions away) and on a tree that moved under it on every
// try (walkUsage).
func usage(dir string) (total int64, entries int, err error) {
	for range usageTries {
		total, entries, err = walkUsage(dir)
		if !errors.Is(err, errUsageMoved) {
			break
		}
	}
	return total, entries, err
}

// usageTries is how often usage walks a tree that moves under it.
const usageTries = 3

// errUsageMoved: a directory of the walk was moved while the walk was
// below it, so the way back up leads elsewhere.
var errUsageMoved = errors.New("a directory moved during the usage walk")

// keptOpen is how many directories of a walk's path keep their
// descriptors while it walks below them. A deeper one closes its own on
// the way down, and is opened again through its child's "..", checked to
// be the same directory, on the way back: a walk holds at most keptOpen+1
// descriptors, however deep the tree.
const keptOpen = 16

// usageWalk is one walk of usage: the directories from its root down to
// the one it reads, each with the subdirectories it has yet to walk.
type usageWalk struct {
	total   int64
	entries int
	path    []walkedDir
	buf     []byte   // getdents
	names   []string // of the directory being read
}

// walkedDir is a directory on a walk's path.
type walkedDir struct {
	fd       int // -1 while closed (deeper than keptOpen)
	dev, ino uint64
	subdirs  []string
}

// walkUsage is one try of usage.
func walkUsage(dir string) (int64, int, error) {
	w := usageWalk{buf: make([]byte, 8<<10)}
	defer w.close()
	fd, err := openDirAt(unix.AT_FDCWD, dir)
	if errors.Is(err, unix.ENOENT) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if err := w.enter(fd, true); err != nil {
		return 0, 0, err
	}
	for len(w.path) > 0 {
		top := &w.path[len(w.path)-1]
		n := len(top.subdirs)
		if n == 0 {
			if err := w.leave(); err != nil {
				return 0, 0, err
			}
			continue
		}
		name := top.subdirs[n-1]
		top.subdirs = top.subdirs[:n-1]
		fd, err := openDirAt(top.fd, name)
		switch {
		case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
			continue // removed, or replaced by a file or a symlink, since it was read
		case err != nil:
			return 0, 0, err
		}
		if len(w.path) > keptOpen {
			_ = unix.Close(top.fd)
			top.fd = -1
		}
		if err := w.enter(fd, false); err != nil {
			return 0, 0, err
		}
	}
	return w.total, w.entries, nil
}

// walkEntered, when set (by tests), is called with the depth (1: the
// root) and the descriptor of each directory the walk enters.
var walkEntered func(depth, fd int)

// openDirAt opens directory name below the directory at fd, following no
// symlink.
func openDirAt(fd int, name string) (int, error) {
	return ignoringEINTR(func() (int, error) {
		return unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
}

// enter reads the directory at fd, which it then owns: every entry's
// blocks are counted (the directory's own too when it is the walk's root;
// its parent counted them otherwise), and its subdirectories are left to
// walk.
func (w *usageWalk) enter(fd int, root bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return err
	}
	if root {
		w.total += entryBytes(&st)
		w.entries++
	}
	w.path = append(w.path, walkedDir{fd: fd, dev: st.Dev, ino: st.Ino})
	if walkEntered != nil {
		walkEntered(len(w.path), fd)
	}
	d := &w.path[len(w.path)-1]
	for {
		n, err := ignoringEINTR(func() (int, error) { return unix.Getdents(fd, w.buf) })
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		_, _, w.names = unix.ParseDirent(w.buf[:n], -1, w.names[:0])
		for _, name := range w.names {
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
				continue
			} else if err != nil {
				return err
			}
			w.total += entryBytes(&st)
			w.entries++
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				d.subdirs = append(d.subdirs, name)
			}
		}
	}
}

// leave closes the directory the walk has finished, back in its parent,
// which it opens again through ".." when it was closed.
func (w *usageWalk) leave() error {
	done := w.path[len(w.path)-1]
	w.path = w.path[:len(w.path)-1]
	defer func() { _ = unix.Close(done.fd) }()
	if len(w.path) == 0 {
		return nil
	}
	parent := &w.path[len(w.path)-1]
	if parent.fd >= 0 {
		return nil
	}
	fd, err := openDirAt(done.fd, "..")
	if err != nil {
		return errors.Join(errUsageMoved, err) // ".." of a directory removed meanwhile is gone
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != parent.dev || st.Ino != parent.ino {
		_ = unix.Close(fd)
		return errors.Join(errUsageMoved, err)
	}
	parent.fd = fd
	return nil
}

// close closes the descriptors the walk still holds.
func (w *usageWalk) close() {
	for _, d := range w.path {
		if d.fd >= 0 {
			_ = unix.Close(d.fd)
		}
	}
	w.path = nil
}

// fileBytes is what the regular file at sandbox path p counts toward the
// limit now (entryBytes; 0 if there is none), which a write replacing it
// frees.
func (l *Layout) fileBytes(p string) int64 {
	m, rel, err := l.resolve(p)
	if err != nil {
		return 0
	}
	root, err := l.openMount(m)
	if err != nil {
		return 0
	}
	defer func() { _ = root.Close() }()
	fi, err := root.Lstat(filepath.FromSlash(rel))
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return max(st.Blocks*512, entryMinBytes)
	}
	return 0
}
