package devstack

import (
	"fmt"
	"os"
)

// privateDirMode is a data dir only its owner may enter.
const privateDirMode = 0o700

// serverSearchMode lets the owner in and every other user only pass through
// (no listing): the PostgreSQL server user and the sandbox user reach their
// own directories below, each of which is private to its user.
const serverSearchMode = 0o711

// PrivateDir creates dir (with its parents) if needed and makes it private
// to the current user: mode 0700, whatever it was. When PostgreSQL will run
// as another user (we are root), dir is made 0711 instead: the server and
// the sandbox user (bwrap runs tools as a dedicated uid when we are root)
// reach their own directories below, which stay private to them, while
// nobody can list dir or open what else it holds (0700 and 0600 entries).
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, privateDirMode); err != nil {
		return fmt.Errorf("create data dir %s: %w", dir, err)
	}
	cred, err := serverCredential()
	if err != nil {
		cred = nil // no postgres user: Postgres will not start anyway and says why
	}
	mode := os.FileMode(privateDirMode)
	if cred != nil {
		mode = serverSearchMode
	}
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("make data dir %s private: %w", dir, err)
	}
	return nil
}
