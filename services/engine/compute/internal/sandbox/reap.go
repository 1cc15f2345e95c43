package sandbox

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// reap removes the groups that an executor which is gone (crashed, killed)
// left below parent: "xbot.<pid>.box…" whose pid no longer exists. Their
// processes are killed first. Errors are ignored: a group that cannot be
// removed now is tried again at the next start.
func reap(h hierarchy, parent cgroup) {
	ents, err := os.ReadDir(parent[0])
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !staleBox(e.Name()) {
			continue
		}
		box := parent.child(e.Name())
		subs, _ := os.ReadDir(box[0])
		for _, s := range subs {
			if s.IsDir() {
				leaf := box.child(s.Name())
				h.kill(leaf)
				_ = leaf.remove()
			}
		}
		h.kill(box)
		_ = box.remove()
	}
}

// staleBox reports whether name is a box group of a process that is gone.
func staleBox(name string) bool {
	rest, ok := strings.CutPrefix(name, "xbot.")
	if !ok {
		return false
	}
	pidText, what, ok := strings.Cut(rest, ".")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 || pid == os.Getpid() || !strings.HasPrefix(what, "box") {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
