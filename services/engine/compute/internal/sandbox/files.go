package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// openFlags add O_NONBLOCK so that opening a FIFO planted in the sandbox
// returns at once instead of waiting for a peer; such files are then refused.
const openFlags = syscall.O_NONBLOCK

// ReadFile reads at most limit bytes (limit <= 0: all) of the regular file
// at sandbox path p.
func (l *Layout) ReadFile(p string, limit int64) ([]byte, bool, error) {
	f, err := l.open(p, os.O_RDONLY, 0)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	defer func() { _ = f.Close() }()
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	if limit > 0 && int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

// WriteFile replaces the regular file at sandbox path p, creating parent
// directories. The run's input is refused with fs.ErrPermission.
func (l *Layout) WriteFile(p string, data []byte) error {
	f, err := l.open(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// open opens the regular file at sandbox path p inside its mount; flag
// with O_CREATE also creates the parent directories.
func (l *Layout) open(p string, flag int, perm os.FileMode) (*os.File, error) {
	m, rel, err := l.resolve(p)
	if err != nil {
		return nil, err
	}
	writing := flag&(os.O_WRONLY|os.O_RDWR) != 0
	if writing && m.ReadOnly {
		return nil, fmt.Errorf("%s is read-only: %w", m.Sandbox, fs.ErrPermission)
	}
	if rel == "." {
		return nil, fmt.Errorf("%s is a directory", m.Sandbox)
	}
	root, err := l.openMount(m)
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	if flag&os.O_CREATE != 0 {
		if err := root.MkdirAll(path.Dir(rel), 0o755); err != nil {
			return nil, fileErr(err)
		}
	}
	f, err := root.OpenFile(filepath.FromSlash(rel), flag|openFlags, perm)
	if err != nil {
		return nil, fileErr(err)
	}
	if flag&os.O_CREATE != 0 {
		if err := l.owner.chownTree(root, rel); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, errors.New("not a regular file")
	}
	return f, nil
}

// ListFiles lists the directory at sandbox path dir up to depth levels
// (depth < 1 counts as 1), in lexical order. Symlinks are listed, never
// followed. It lists at most compute.MaxListed entries, and reads no
// directory further than the listing may still grow: a directory of
// millions of entries costs no more than that (which of them are listed is
// then the filesystem's choice, not the lexical order's).
func (l *Layout) ListFiles(dir string, depth int, stop func() error) ([]compute.FileInfo, error) {
	m, rel, err := l.resolve(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	root, err := l.openMount(m)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	defer func() { _ = root.Close() }()
	if fi, err := root.Stat(filepath.FromSlash(rel)); err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, fileErr(err))
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("list %s: not a directory", dir)
	}
	ls := lister{root: root, mount: m.Sandbox, depth: max(depth, 1), stop: stop}
	if err := ls.list(rel, 1); err != nil && !errors.Is(err, errListFull) {
		return nil, fmt.Errorf("list %s: %w", dir, fileErr(err))
	}
	return ls.out, nil
}

// errListFull ends a listing that holds compute.MaxListed entries.
var errListFull = errors.New("the listing is full")

// lister is one ListFiles.
type lister struct {
	root  *os.Root
	mount string // the sandbox path of root
	depth int
	stop  func() error
	out   []compute.FileInfo
}

// list appends the entries of directory rel (slash-separated, below root),
// level levels below the listed one, each followed by its own when it is a
// directory above the depth. A subdirectory it cannot read is listed, not
// entered.
func (ls *lister) list(rel string, level int) error {
	f, err := ls.root.Open(filepath.FromSlash(rel))
	if err != nil {
		if level > 1 {
			return nil
		}
		return err
	}
	ents, err := f.ReadDir(compute.MaxListed - len(ls.out))
	_ = f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		if level > 1 {
			return nil
		}
		return err
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, d := range ents {
		if err := ls.stop(); err != nil {
			return err
		}
		if len(ls.out) == compute.MaxListed {
			return errListFull
		}
		p := path.Join(rel, d.Name())
		ls.out = append(ls.out, entry(ls.mount, p, d))
		if d.IsDir() && level < ls.depth {
			if err := ls.list(p, level+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func entry(mount, p string, d fs.DirEntry) compute.FileInfo {
	fi := compute.FileInfo{Path: path.Join(mount, p), IsDir: d.IsDir()}
	if info, err := d.Info(); err == nil && !d.IsDir() {
		fi.Size = info.Size()
	}
	return fi
}
