package plugin

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Bounds of an installed tree: its files, and as many directories.
const (
	maxFiles     = 2000
	maxTotal     = 50 << 20
	maxFileBytes = 10 << 20
)

// budget counts a tree being staged against the bounds, and refuses two
// paths that differ only by case (they would collide on a case-insensitive
// file system).
type budget struct {
	files, dirs int
	total       int64
	seen        map[string]string
}

func newBudget() *budget { return &budget{seen: map[string]string{}} }

func (b *budget) add(rel string, size int64) error {
	b.files++
	b.total += size
	switch {
	case b.files > maxFiles:
		return fmt.Errorf("%w: more than %d files", ErrUnsafe, maxFiles)
	case size > maxFileBytes:
		return fmt.Errorf("%w: %s is larger than %d MiB", ErrUnsafe, rel, maxFileBytes>>20)
	case b.total > maxTotal:
		return fmt.Errorf("%w: more than %d MiB in all", ErrUnsafe, maxTotal>>20)
	}
	return b.path(rel)
}

// dir counts a directory: a source of empty directories is bounded too.
func (b *budget) dir(rel string) error {
	if b.dirs++; b.dirs > maxFiles {
		return fmt.Errorf("%w: more than %d directories", ErrUnsafe, maxFiles)
	}
	return b.path(rel)
}

func (b *budget) path(rel string) error {
	fold := strings.ToLower(rel)
	if other, ok := b.seen[fold]; ok && other != rel {
		return fmt.Errorf("%w: %s and %s differ only by case", ErrUnsafe, other, rel)
	}
	b.seen[fold] = rel
	return nil
}

// copyTree copies the plugin at src into dst (which exists): regular files
// (0600, 0700 when executable at the source) and directories (0700) only.
// A symlink, hard link, device, FIFO or socket anywhere is refused, as are
// trees over the bounds. The top-level .git, data/ and receipt are left
// out. Nothing of the source is run.
func copyTree(src, dst string) error {
	b := newBudget()
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		slash := filepath.ToSlash(rel)
		if excluded(slash) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if err := b.dir(slash); err != nil {
				return err
			}
			return os.Mkdir(target, 0o700)
		case !d.Type().IsRegular():
			return fmt.Errorf("%w: %s is a %s, not a regular file", ErrUnsafe, slash, kind(d.Type()))
		}
		return copyFile(p, target, slash, b)
	})
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// copyFile copies one regular file, refusing hard links and files that
// change type under it (opened without following a symlink).
func copyFile(p, target, rel string, b *budget) error {
	in, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnsafe, rel, err)
	}
	defer func() { _ = in.Close() }()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrUnsafe, rel)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fmt.Errorf("%w: %s is a hard link", ErrUnsafe, rel)
	}
	if err := b.add(rel, fi.Size()); err != nil {
		return err
	}
	mode := os.FileMode(0o600)
	if fi.Mode().Perm()&0o111 != 0 {
		mode = 0o700
	}
	return writeFile(target, io.LimitReader(in, maxFileBytes+1), mode)
}

// writeFile creates target (which must not exist) with mode.
func writeFile(target string, r io.Reader, mode os.FileMode) error {
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode) // #nosec G304 -- inside the staging directory
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
