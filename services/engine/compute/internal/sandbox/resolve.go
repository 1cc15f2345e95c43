package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// resolve maps a sandbox path (absolute, or relative to the working
// directory; "" is the working directory) to one of the run's mounts and a clean path below it ("."
// for the mount itself). It is lexical: symlinks are left to os.Root.
func (l *Layout) resolve(p string) (Mount, string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return Mount{}, "", fmt.Errorf("path %q: %w", p, fs.ErrInvalid)
	}
	if path.IsAbs(p) {
		p = path.Clean(p)
	} else {
		p = path.Join(l.paths.WorkingDirectory, p)
	}
	for _, m := range append(l.mounts[:len(l.mounts):len(l.mounts)], l.extra...) {
		if p == m.Sandbox {
			return m, ".", nil
		}
		if rest, ok := strings.CutPrefix(p, m.Sandbox+"/"); ok {
			return m, rest, nil
		}
	}
	return Mount{}, "", fmt.Errorf("%s: %w", p, compute.ErrPathOutside)
}

// HostPath returns the host path of a sandbox path, checked lexically only;
// the local provider uses it for a command's working directory.
func (l *Layout) HostPath(p string) (string, error) {
	m, rel, err := l.resolve(p)
	if err != nil {
		return "", err
	}
	return filepath.Join(m.Host, filepath.FromSlash(rel)), nil
}

// openMount opens m as an os.Root, itself opened through the key directory
// so that a mount directory replaced by a symlink is refused too.
func (l *Layout) openMount(m Mount) (*os.Root, error) {
	if m.external {
		r, err := os.OpenRoot(m.Host)
		if err != nil {
			return nil, fileErr(err)
		}
		return r, nil
	}
	key, err := os.OpenRoot(l.keyDir)
	if err != nil {
		return nil, fileErr(err)
	}
	defer func() { _ = key.Close() }()
	r, err := key.OpenRoot(filepath.FromSlash(m.rel))
	if err != nil {
		return nil, fileErr(err)
	}
	return r, nil
}

// fileErr maps host errors to the compute sentinels. Host paths never appear
// in the result: os.Root reports names relative to the root.
func fileErr(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return compute.ErrNotFound
	case isEscape(err):
		return compute.ErrPathOutside
	default:
		return err
	}
}

// escapeErr is the error os.Root reports when a path (through "..", or a
// symlink) leaves the root. The os package does not export it, so it is
// captured once by asking a root for its parent.
var escapeErr = sync.OnceValue(func() error {
	r, err := os.OpenRoot("/")
	if err != nil {
		return nil
	}
	defer func() { _ = r.Close() }()
	_, err = r.Lstat("..")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
})

func isEscape(err error) bool {
	e := escapeErr()
	return e != nil && errors.Is(err, e)
}
