package profile

import (
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// Limits are the sandbox's resource limits as the compute provider takes
// them; zero fields take the provider's defaults.
func (s Sandbox) Limits() compute.Limits {
	return compute.Limits{MemoryBytes: s.MemoryMiB << 20, Pids: s.Pids, CPUMillis: s.CPUMillis, WorkspaceBytes: s.WorkspaceMiB << 20}
}

// maxMiB bounds memoryMiB and workspaceMiB (1 PiB), so that converting
// them to bytes cannot overflow.
const maxMiB = 1 << 30

func (s Sandbox) validate() error {
	if s.MemoryMiB < 0 || s.Pids < 0 || s.CPUMillis < 0 || s.WorkspaceMiB < 0 ||
		s.MemoryMiB > maxMiB || s.WorkspaceMiB > maxMiB {
		return errors.New("memoryMiB, pids, cpuMillis and workspaceMiB must be >= 0 (and MiB values at most 2^30)")
	}
	return s.Limits().Validate()
}

// validateMounts checks the operator's read-only mounts; /skills is kept
// for the run's skill versions.
func (s Sandbox) validateMounts() error {
	for _, m := range s.Mounts {
		if compute.Under(m.Target, compute.SkillsRoot) {
			return fmt.Errorf("target %q: %s holds the run's skills", m.Target, compute.SkillsRoot)
		}
	}
	return compute.CheckMounts(s.Mounts)
}
