package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// TestModelKeysWithheldFromPlugins: the variable an agent's model key is
// read from (its profile's apiKeyEnv) is withheld from the provider plugin
// although its manifest passes it through, and the set follows the
// profiles. Not parallel: it sets HOME.
func TestModelKeysWithheldFromPlugins(t *testing.T) {
	c, out := testConsole(t)
	src := variant(t, computetest.ReferencePlugin(t), "keyed-lp")
	manifest := filepath.Join(src, "xbot-provider.toml")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "env_passthrough = []", `env_passthrough = ["AGENT_KEY", "PLUGIN_FLAG"]`, 1))
	if err := os.WriteFile(manifest, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := runProvider(t.Context(), []string{"install", "--yes", src}, c); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	agents := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(agents, []byte("agents:\n  - id: a\n    model: m\n    baseUrl: https://llm.example/v1\n    apiKeyEnv: AGENT_KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XBOT_AGENTS_FILE", agents)
	t.Setenv("XBOT_COMPUTE_PROVIDER", "keyed-lp")
	s, err := load("executor", []string{"--log-level", "error", "--compute-dir", t.TempDir()}, "json")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.profiles(); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.compute("")
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Plugin.Withhold
	if w == nil || !w("AGENT_KEY") || w("PLUGIN_FLAG") {
		t.Fatalf("the plugin may get AGENT_KEY (the agent's model key) or may not get PLUGIN_FLAG")
	}
	reloaded := "agents:\n  - id: a\n    model: m\n    baseUrl: https://llm.example/v1\n    apiKeyEnv: PLUGIN_FLAG\n"
	if err := os.WriteFile(agents, []byte(reloaded), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.profiles(); err != nil { // as a reload (SIGHUP) does
		t.Fatal(err)
	}
	if !w("PLUGIN_FLAG") || w("AGENT_KEY") {
		t.Errorf("after a reload whose agent reads its key from PLUGIN_FLAG, the withheld set did not follow")
	}
}
