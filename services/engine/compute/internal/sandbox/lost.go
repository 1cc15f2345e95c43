package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// errDestroyed is returned by a handle whose key the provider destroyed.
var errDestroyed = fmt.Errorf("%w: the sandbox was destroyed", compute.ErrSandboxLost)

// lostNow is lost, or errDestroyed for a handle whose key was destroyed.
func (b *Box) lostNow() error {
	b.mu.Lock()
	destroyed := b.destroyed
	b.mu.Unlock()
	if destroyed {
		return errDestroyed
	}
	return b.lost()
}

// lost returns an error wrapping compute.ErrSandboxLost when a directory of
// the run that this handle created (or found) has gone from the host since:
// the sandbox was deleted under the run. A directory nothing has needed yet
// is not looked at, so a handle whose sandbox was deleted before it used it
// simply creates a fresh one. One lstat per directory the handle uses.
func (b *Box) lost() error {
	for _, m := range b.layout.mounts {
		if !b.layout.created(m) {
			continue
		}
		if _, err := os.Lstat(m.Host); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s was deleted from the host", compute.ErrSandboxLost, m.Sandbox)
		}
	}
	return nil
}
