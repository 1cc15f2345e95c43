package computetest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Dir is a fresh directory for a provider's sandboxes that the unprivileged
// sandbox user can reach when the tests run as root: tb.TempDir's parent is
// private to the test process's user (0700), so Dir makes it searchable by
// others (0711, no listing). It is removed when the test ends.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil { // #nosec G302 -- search only: the sandbox user passes through
		tb.Fatal(err)
	}
	return dir
}

// Process is a live process of this machine.
type Process struct {
	PID int
	// Cmdline is the process's command line, arguments separated by spaces.
	Cmdline string
}

// String is "pid: command line".
func (p Process) String() string { return fmt.Sprintf("%d: %s", p.PID, p.Cmdline) }

// Processes lists the live processes whose command line contains marker,
// in pid order. Zombies have an empty command line and do not count; a
// process that ends while it is read is left out.
func Processes(marker string) []Process {
	entries, _ := os.ReadDir("/proc") // without /proc there is nothing to list
	var out []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(marker)) {
			out = append(out, Process{PID: pid, Cmdline: string(bytes.TrimRight(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), " "))})
		}
	}
	return out
}
