package systemtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// conformanceAgents are the agents the conformance suites need, loaded
// from the agents file they document.
func conformanceAgents(t *testing.T) []profile.Profile {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(path, []byte(contracttests.ConformanceAgentsYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cat, err := profile.Load(path)
	if err != nil {
		t.Fatalf("the conformance agents do not load: %v", err)
	}
	var out []profile.Profile
	for _, id := range cat.IDs() {
		if p, _ := cat.Get(id); id != "demo" {
			out = append(out, p)
		}
	}
	return out
}

// conformanceSystem starts a whole system on the test's Kafka cluster
// (kfake, or Apache Kafka with XBOT_TEST_KAFKA=apache) with the
// conformance agents and bwrap sandboxes, and returns it as a target of the
// suites.
func conformanceSystem(t *testing.T, agents ...profile.Profile) (*env, *stack.Stack, contracttests.Target) {
	t.Helper()
	e, st, _ := conformanceSystemIn(t, agents...)
	return e, st, contracttests.Target{BaseURL: "http://" + st.Addr(), Token: token, OtherToken: otherToken}
}

// conformanceSystemIn is conformanceSystem that also returns the bwrap
// provider's base directory.
func conformanceSystemIn(t *testing.T, agents ...profile.Profile) (*env, *stack.Stack, string) {
	t.Helper()
	e := newEnv(t)
	st, dir := bwrapAgentEnv(t, e, func(*stack.Options) {}, append(conformanceAgents(t), agents...)...)
	startStreams(t, e, st)
	return e, st, dir
}

// TestStep3ConformanceSuites is step 3 of the runtime client contract's
// verification: the API and runtime client conformance suites pass against
// a whole system on real Kafka (kfake over TCP here; a 3-broker Apache
// Kafka cluster under XBOT_TEST_KAFKA=apache), a real PostgreSQL and bwrap
// sandboxes.
func TestStep3ConformanceSuites(t *testing.T) {
	t.Parallel()
	e, st, target := conformanceSystem(t)
	t.Run("API", func(t *testing.T) { contracttests.APIConformance(t, target) })
	t.Run("RuntimeClient", func(t *testing.T) { contracttests.RuntimeClientConformance(t, target) })
	e.invariants(st)
}
