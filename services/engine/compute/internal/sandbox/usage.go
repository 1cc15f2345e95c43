package sandbox

import (
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// mechUsage is how LimitError names the workspace check.
const mechUsage = "usage check"

// checkWrite refuses a write of n bytes to sandbox path p that would take
// the key's directories past the workspace limit.
func (b *boxLimits) checkWrite(l *Layout, p string, n int) error {
	limit := b.limits.WorkspaceBytes
	if limit <= 0 {
		return nil
	}
	used := usage(l.keyDir) - l.fileBytes(p)
	if used+int64(n) > limit {
		return &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: limit, Mechanism: mechUsage}
	}
	return nil
}

// checkUsage reports when the key's directories exceed the workspace
// limit, after a command: the files stay (so the run can remove them), and
// every further write is refused until they fit.
func (b *boxLimits) checkUsage(l *Layout) error {
	limit := b.limits.WorkspaceBytes
	if limit > 0 && usage(l.keyDir) > limit {
		return &compute.LimitError{Resource: compute.ResourceWorkspace, Limit: limit, Mechanism: mechUsage}
	}
	return nil
}

// usage is the disk space allocated to everything below dir (st_blocks, so
// a sparse file counts what it really occupies; directories count too).
// Entries that vanish during the walk are skipped.
func usage(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil //nolint:nilerr // an entry removed meanwhile uses no space
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				total += st.Blocks * 512
			}
		}
		return nil
	})
	return total
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
