package epp_test

import (
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
)

// referenceConfig is the reference plugin's provider with its state below
// a fresh directory of t.
func referenceConfig(t *testing.T) epp.Config {
	t.Helper()
	return epp.Config{ID: "local-process", Dir: pluginDir, Command: []string{"./local-process"},
		DataDir: t.TempDir(), Features: []string{"sandbox.lifecycle", "exec.run", "exec.stream", "files.rw", "mounts.read_only"},
		Logger: zaptest.NewLogger(t)}
}

func newReference(t *testing.T, cfg epp.Config) *epp.Provider {
	t.Helper()
	p, err := epp.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestContract runs the compute provider suite against the reference
// plugin through the EPP host (not in parallel: see
// contracttests.ComputeProvider).
func TestContract(t *testing.T) {
	contracttests.ComputeProvider(t, func(t *testing.T) compute.Provider {
		return newReference(t, referenceConfig(t))
	})
}

func TestMechanismIsThePlugins(t *testing.T) {
	t.Parallel()
	p := newReference(t, referenceConfig(t))
	if p.Name() != "local-process" || p.Isolation() != "none" || (!strings.HasPrefix(p.Mechanism(), "cgroup") && !strings.HasPrefix(p.Mechanism(), "rlimit")) {
		t.Errorf("name %q, isolation %q, mechanism %q", p.Name(), p.Isolation(), p.Mechanism())
	}
}
