package compute

import (
	"errors"
	"fmt"
)

// Limits bound what one sandbox (one run's handle) may use. Which of them a
// provider enforces exactly depends on the mechanism available on the host
// (cgroup v2, cgroup v1, rlimits); see the provider's documentation.
type Limits struct {
	// MemoryBytes bounds the memory (RSS and page cache, no swap) of all the
	// sandbox's processes together; a command that exceeds it is killed.
	MemoryBytes int64 `json:"memoryBytes,omitempty"`
	// Pids bounds the processes and threads running at once; a fork beyond
	// it fails with EAGAIN.
	Pids int64 `json:"pids,omitempty"`
	// CPUMillis is the CPU quota in thousandths of a core (1000 = one core);
	// a sandbox over it is throttled, not killed.
	CPUMillis int64 `json:"cpuMillis,omitempty"`
	// WorkspaceBytes bounds the disk space used by the sandbox key's
	// directories (workspace, session context, runs' files).
	WorkspaceBytes int64 `json:"workspaceBytes,omitempty"`
}

// Or returns l with every zero field taken from d.
func (l Limits) Or(d Limits) Limits {
	if l.MemoryBytes == 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.Pids == 0 {
		l.Pids = d.Pids
	}
	if l.CPUMillis == 0 {
		l.CPUMillis = d.CPUMillis
	}
	if l.WorkspaceBytes == 0 {
		l.WorkspaceBytes = d.WorkspaceBytes
	}
	return l
}

// Validate refuses negative limits and ones too small for a shell to
// start: less than 16 MiB of memory or 1 MiB of disk, fewer than 8
// processes, less than a hundredth of a core. Zero fields are valid.
func (l Limits) Validate() error {
	var errs []error
	if l.MemoryBytes != 0 && l.MemoryBytes < 16<<20 {
		errs = append(errs, errors.New("memory must be at least 16 MiB"))
	}
	if l.WorkspaceBytes != 0 && l.WorkspaceBytes < 1<<20 {
		errs = append(errs, errors.New("workspace must be at least 1 MiB"))
	}
	if l.Pids != 0 && l.Pids < 8 {
		errs = append(errs, errors.New("pids must be at least 8"))
	}
	if l.CPUMillis != 0 && l.CPUMillis < 10 {
		errs = append(errs, errors.New("cpu must be at least 10 millicores"))
	}
	return errors.Join(errs...)
}

// Resources named by LimitError.
const (
	ResourceMemory    = "memory"
	ResourcePids      = "pids"
	ResourceWorkspace = "workspace"
)

// LimitError reports that a sandbox reached one of its Limits. It wraps
// ErrLimit.
type LimitError struct {
	// Resource is ResourceMemory, ResourcePids or ResourceWorkspace.
	Resource string
	// Limit is the limit in force (bytes, or processes for pids).
	Limit int64
	// Mechanism is what enforced it: "cgroup v2", "cgroup v1", "rlimit" or
	// "usage check".
	Mechanism string
}

func (e *LimitError) Error() string {
	switch e.Resource {
	case ResourcePids:
		return fmt.Sprintf("process limit of %d reached (%s): a fork failed or the command was stopped", e.Limit, e.Mechanism)
	case ResourceMemory:
		return fmt.Sprintf("memory limit of %s reached (%s): the command was killed", Bytes(e.Limit), e.Mechanism)
	default:
		return fmt.Sprintf("%s limit of %s reached (%s)", e.Resource, Bytes(e.Limit), e.Mechanism)
	}
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// Bytes formats n in binary units for messages: 1 GiB, 64 MiB, 1536 KiB.
func Bytes(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
