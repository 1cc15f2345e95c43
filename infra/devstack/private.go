package devstack

import (
	"fmt"
	"os"
)

// privateDirMode is a data dir only its owner may enter.
const privateDirMode = 0o700

// serverSearchMode lets the owner in and the PostgreSQL server's group pass
// through to the data root below, nobody else.
const serverSearchMode = 0o710

// PrivateDir creates dir (with its parents) if needed and makes it private
// to the current user: mode 0700, whatever it was. When PostgreSQL will run
// as another user (we are root), dir is made 0710 with that user's group
// instead, so the server can reach its data root below dir without dir
// becoming searchable by everyone (StartPostgres would otherwise add o+x).
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
		if err := os.Chown(dir, -1, int(cred.Gid)); err != nil {
			return fmt.Errorf("give %s's group access to data dir %s: %w", serverUser, dir, err)
		}
		mode = serverSearchMode
	}
	if err := os.Chmod(dir, mode); err != nil {
		return fmt.Errorf("make data dir %s private: %w", dir, err)
	}
	return nil
}
