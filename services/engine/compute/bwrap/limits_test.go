package bwrap_test

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// TestLimitConfig: a bad mechanism or default limit is a configuration
// error; asking for a cgroup version this host cannot provide fails New and
// says why; rlimits can always be chosen and are named with the reason.
func TestLimitConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]bwrap.Config{
		"mechanism":    {LimitMechanism: "cgroup3"},
		"tiny memory":  {Limits: compute.Limits{MemoryBytes: 1 << 10}},
		"negative cpu": {Limits: compute.Limits{CPUMillis: -1}},
	} {
		cfg.Dir, cfg.Logger = computetest.Dir(t), zaptest.NewLogger(t)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, cfg)
		}
	}
	_, err := bwrap.New(bwrap.Config{Dir: computetest.Dir(t), Logger: zaptest.NewLogger(t), LimitMechanism: "cgroup2",
		CgroupParent: "/nonexistent/cgroup"})
	if err == nil || errors.Is(err, compute.ErrUnavailable) || !strings.Contains(err.Error(), "cgroup2 is not usable here") {
		t.Errorf("New asking for an unusable cgroup v2 = %v", err)
	}
	p := newProviderWith(t, bwrap.Config{Dir: computetest.Dir(t), LimitMechanism: "rlimit"})
	if m := p.(*bwrap.Provider).Mechanism(); m != "rlimit (configured)" {
		t.Errorf("Mechanism() = %q", m)
	}
}
