package devstack

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"

	"go.uber.org/zap"
)

// serverUser is the account PostgreSQL runs as when we are root.
const serverUser = "postgres"

// serverCredential returns the identity to run PostgreSQL as: nil (ourselves)
// unless we are root, then the postgres system user with its groups.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(serverUser)
	if err != nil {
		return nil, fmt.Errorf("running as root needs the %q user to run PostgreSQL: %w", serverUser, err)
	}
	uid, errU := strconv.ParseUint(u.Uid, 10, 32)
	gid, errG := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(errU, errG); err != nil {
		return nil, fmt.Errorf("parse ids of user %q: %w", serverUser, err)
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	ids, _ := u.GroupIds() // supplementary groups are a nicety; primary gid suffices
	for _, s := range ids {
		if g, err := strconv.ParseUint(s, 10, 32); err == nil {
			cred.Groups = append(cred.Groups, uint32(g))
		}
	}
	return cred, nil
}

// prepareDir creates dir and, when cred is set, makes it usable by that user:
// dir (and a pgdata left by another owner) is chowned to it, and every
// ancestor it cannot search gets o+x.
func prepareDir(dir string, cred *syscall.Credential, log *zap.Logger) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create data root %s: %w", dir, err)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("resolve data root %s: %w", dir, err)
	}
	if cred == nil {
		return resolved, nil
	}
	if err := os.Chown(resolved, int(cred.Uid), int(cred.Gid)); err != nil {
		return "", fmt.Errorf("chown data root %s to %s: %w", resolved, serverUser, err)
	}
	if err := chownTree(filepath.Join(resolved, "pgdata"), cred); err != nil {
		return "", err
	}
	if err := openAncestors(resolved, cred, log); err != nil {
		return "", err
	}
	return resolved, nil
}

// chownTree hands a pgdata tree to cred's user if its top is owned by
// someone else (e.g. created by an earlier non-root run). Missing is fine.
func chownTree(root string, cred *syscall.Credential) error {
	st, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", root, err)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid == cred.Uid {
		return nil
	}
	err = filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid)) //nolint:gosec // G122: a data dir xbot created; Lchown never follows links
	})
	if err != nil {
		return fmt.Errorf("chown %s to %s: %w", root, serverUser, err)
	}
	return nil
}

// openAncestors adds o+x to each ancestor of dir that cred cannot search.
func openAncestors(dir string, cred *syscall.Credential, log *zap.Logger) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("stat %s: %w", p, err)
		}
		if !canSearch(st, cred) {
			mode := st.Mode().Perm() | 0o001
			if err := os.Chmod(p, mode); err != nil {
				return fmt.Errorf("let %s search %s (chmod o+x): %w", serverUser, p, err)
			}
			log.Info("devstack: added o+x so postgres can reach its data", zap.String("dir", p))
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// canSearch applies the owner/group/other execute bit that governs cred.
func canSearch(st fs.FileInfo, cred *syscall.Credential) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := st.Mode().Perm()
	switch {
	case sys.Uid == cred.Uid:
		return perm&0o100 != 0
	case sys.Gid == cred.Gid || slices.Contains(cred.Groups, sys.Gid):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}
