package sandbox

import (
	"fmt"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// CheckSpec checks spec as Provider.Open does — the key's and run's ids,
// the environment, the options and the limits — and returns the run's
// sandbox paths as every provider lays them out. A provider that keeps its
// sandboxes elsewhere (a plugin) uses it so that its runs see the same
// paths and refuse the same specs.
func CheckSpec(spec compute.Spec) (compute.Paths, error) {
	if err := checkEnv(spec.Env); err != nil {
		return compute.Paths{}, fmt.Errorf("open sandbox: %w", err)
	}
	if err := checkOptions(spec); err != nil {
		return compute.Paths{}, fmt.Errorf("open sandbox: %w", err)
	}
	if err := checkMounts(spec.ReadOnlyMounts); err != nil {
		return compute.Paths{}, fmt.Errorf("open sandbox: %w", err)
	}
	if err := spec.Limits.Validate(); err != nil {
		return compute.Paths{}, fmt.Errorf("open sandbox: limits: %w", err)
	}
	l, err := newLayout("/", spec)
	if err != nil {
		return compute.Paths{}, fmt.Errorf("open sandbox: %w", err)
	}
	return l.paths, nil
}
