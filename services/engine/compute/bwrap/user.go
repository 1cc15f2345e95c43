package bwrap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

// DefaultUID and DefaultGID are the host user and group of sandboxed
// processes when the executor runs as root. 65200 lies in the range Debian
// reserves (65000–65533: neither packages nor adduser allocate it, so it is
// no login user's), and below 65536, so that it exists in the 16-bit uid maps
// of rootless containers.
const (
	DefaultUID = 65200
	DefaultGID = 65200
)

// identity is who sandboxed processes are on the host.
type identity struct {
	// switchTo is set when the executor is root: bwrap (or pasta) starts
	// as this user instead.
	switchTo *sandbox.Owner
	// uid and gid are the host ids of sandboxed processes either way.
	uid, gid int
}

// newIdentity decides the sandbox's host user: cfg's when this process is
// root, else this process's own user, which is not root either.
func newIdentity(cfg Config) identity {
	if os.Geteuid() != 0 {
		return identity{uid: os.Geteuid(), gid: os.Getegid()}
	}
	return identity{switchTo: &sandbox.Owner{UID: cfg.UID, GID: cfg.GID}, uid: cfg.UID, gid: cfg.GID}
}

// credential starts cmd as the sandbox user, with no supplementary groups,
// when the executor is root.
func (id identity) credential(cmd *exec.Cmd) {
	if id.switchTo == nil {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
		Uid: uint32(id.switchTo.UID), Gid: uint32(id.switchTo.GID), Groups: []uint32{}, //nolint:gosec // validated non-negative
	}}
}

// options are the sandbox.Provider options for id: the run's directories
// belong to the sandbox user when it is not this process's.
func (id identity) options() []sandbox.Option {
	if id.switchTo == nil {
		return nil
	}
	return []sandbox.Option{sandbox.WithOwner(*id.switchTo)}
}

// userArgs keep the sandbox's uid and gid equal to the host ones, also
// inside pasta's user namespace, where bwrap starts as that namespace's root.
func (id identity) userArgs() []string {
	return []string{"--uid", strconv.Itoa(id.uid), "--gid", strconv.Itoa(id.gid)}
}

// reachable checks that the sandbox user can reach dir, which bwrap, run as
// that user, resolves: every directory above it must be searchable by
// others (dir itself is handed to the sandbox user's group).
func (id identity) reachable(dir string) error {
	if id.switchTo == nil {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("bwrap compute provider: %w", err)
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("bwrap compute provider: %w: the sandbox user (uid %d) cannot reach %s: %s is mode %04o; "+
				"choose a compute directory whose parents are all searchable by others (chmod o+x), e.g. /var/lib/xbot/sandboxes",
				compute.ErrUnavailable, id.uid, abs, p, fi.Mode().Perm())
		}
		if p == "/" {
			return nil
		}
	}
}
