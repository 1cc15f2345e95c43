package sandbox

import (
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// mechUsage is how LimitError names the workspace check.
const mechUsage = "usage check"

// checkWrite refuses a write of n bytes to sandbox path p that would take
// the key's directories past the workspace limit.
func (b *boxLimits) checkWrite(l *Layout, m *usageMeter, p string, n int) error {
	limit := b.limits.WorkspaceBytes
	if limit <= 0 {
		return nil
	}
	replaced := l.fileBytes(p)
	if !m.fits(l.keyDir, limit, int64(n)-replaced) {
		return &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: limit, Mechanism: mechUsage}
	}
	return nil
}

// checkUsage reports when the key's directories exceed the workspace
// limit, after a command: the files stay (so the run can remove them), and
// every further write is refused until they fit.
func (b *boxLimits) checkUsage(l *Layout, m *usageMeter) error {
	limit := b.limits.WorkspaceBytes
	if limit > 0 && !m.fits(l.keyDir, limit, 0) {
		return &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: limit, Mechanism: mechUsage}
	}
	return nil
}

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
// interval afterwards (one command may overshoot the limit until it ends
// in any case).
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

// fits reports whether the key's usage plus delta bytes stays within limit,
// and counts delta as used when it does.
func (m *usageMeter) fits(dir string, limit, delta int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stale() || m.bytes+delta > limit {
		m.bytes, m.entries = usage(dir)
		m.at = m.now()
	}
	if m.bytes+delta > limit {
		return false
	}
	m.bytes += max(delta, 0)
	return true
}

// stale reports whether the last walk no longer stands for the usage.
func (m *usageMeter) stale() bool {
	if m.at.IsZero() || m.entries <= walkExactEntries {
		return true
	}
	return m.now().Sub(m.at) >= time.Duration(m.entries/walkExactEntries)*walkEvery
}

// usage is the disk space allocated to everything below dir (st_blocks, so
// a sparse file counts what it really occupies; directories count too),
// and the number of entries it visited. Entries that vanish during the walk
// are skipped.
func usage(dir string) (total int64, entries int) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an entry removed meanwhile uses no space
		}
		entries++
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				total += st.Blocks * 512
			}
		}
		return nil
	})
	return total, entries
}

// fileBytes is the space the regular file at sandbox path p occupies now
// (0 if there is none), which a write replacing it frees.
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
		return st.Blocks * 512
	}
	return 0
}
