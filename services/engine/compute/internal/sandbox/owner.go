package sandbox

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
)

// Owner is the host user and group that sandboxed processes run as when
// they are not the executor's own (the executor runs as root and the
// launcher switches to this user). Everything the provider creates for a
// run — its directories and the files written through the Sandbox — is
// handed to Owner, so that the processes can write there while the
// executor, as root, still reads and writes everything.
type Owner struct {
	UID, GID int
}

// uid is o's uid, or this process's when o is nil.
func (o *Owner) uid() int {
	if o == nil {
		return os.Geteuid()
	}
	return o.UID
}

// Option configures a Provider.
type Option func(*Provider)

// WithHostPaths says that commands see host paths (the local provider):
// the run's directories are not mounted where Paths says, so a command can
// reach only its working directory, /workspace (HOME) and the run's tmp
// (TMPDIR), and only those are created for it. Without it a command gets
// every directory of the run (bwrap mounts them all).
func WithHostPaths() Option {
	return func(p *Provider) { p.hostPaths = true }
}

// WithOwner hands every directory and file the provider creates to o, and
// the base directory to o's group (mode 0710: o may only traverse it).
func WithOwner(o Owner) Option {
	return func(p *Provider) { p.owner = &o }
}

// own gives the base directory to the owner's group, traversable only.
func (p *Provider) own() error {
	if p.owner == nil {
		return nil
	}
	if err := os.Lchown(p.base, -1, p.owner.GID); err != nil {
		return fmt.Errorf("%s compute provider: %w", p.name, err)
	}
	if err := os.Chmod(p.base, 0o710); err != nil { //nolint:gosec // the sandbox group must traverse it; others get nothing
		return fmt.Errorf("%s compute provider: %w", p.name, err)
	}
	return nil
}

// chownTree hands rel (slash-separated, relative to root) and every
// directory above it, up to root, to o. Lchown never follows a symlink,
// and root keeps every name inside.
func (o *Owner) chownTree(root *os.Root, rel string) error {
	if o == nil {
		return nil
	}
	for p := path.Clean(rel); p != "." && p != "/"; p = path.Dir(p) {
		if err := root.Lchown(filepath.FromSlash(p), o.UID, o.GID); err != nil {
			return fileErr(err)
		}
	}
	return nil
}
