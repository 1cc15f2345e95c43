package sandbox

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec marks every descriptor of this process from 3 on
// close-on-exec, so that a command inherits its standard streams and what
// its launcher passes (exec.Cmd.ExtraFiles), nothing else. Go opens its own
// descriptors close-on-exec, but one this process inherited open from
// whatever started it (a shell's, a supervisor's) would otherwise stay open
// in every command: neither os/exec nor bwrap closes the rest. A launcher's
// extra files are unaffected: the child gets them as new descriptors.
func closeInheritedOnExec() error {
	err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Before Linux 5.11: one by one.
	entries, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", rerr)
	}
	for _, e := range entries {
		fd, perr := strconv.Atoi(e.Name())
		if perr != nil || fd < 3 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("mark descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}
