package epp

import (
	"sync"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

var hideOnce sync.Once

// hideHost makes this process non-dumpable (once): a plugin runs as the
// host's user, and could otherwise read the host's environment — where
// xbot's secrets may be — its memory and its open files through
// /proc/<pid>, or ptrace it. The process's own use of /proc/self and its
// children (which are dumpable again after their exec) are unaffected; it
// writes no core dumps from then on. Root plugins are not held back by it.
func hideHost(log *zap.Logger) {
	hideOnce.Do(func() {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			log.Warn("could not make the process non-dumpable: provider plugins may read its environment", zap.Error(err))
		}
	})
}
