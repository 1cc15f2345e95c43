package epp_test

import (
	"os"
	"strings"
	"testing"
)

// TestEnvironmentScrubbed: the plugin reports its environment; nothing of
// the host's but the allow-list and the manifest's passthrough reaches it.
// Not parallel: it sets the process's environment.
func TestEnvironmentScrubbed(t *testing.T) {
	for k, v := range map[string]string{"XBOT_LLM_API_KEY": "sk-llm", "XBOT_PG_DSN": "postgres://u:pw@db/x",
		"XBOT_API_TOKENS": "tok=acme", "PGPASSWORD": "pw", "OPENAI_API_KEY": "sk-openai", "AWS_SECRET_ACCESS_KEY": "aws",
		"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer x", "PLUGIN_FLAG": "passed", "LC_ALL": "C.UTF-8",
		"AGENT_MODEL_KEY": "sk-agent"} {
		t.Setenv(k, v)
	}
	cfg := helperConfig(t, "base", "")
	cfg.EnvPassthrough = []string{"PLUGIN_FLAG", "AGENT_MODEL_KEY"} // the host withholds the model key
	cfg.Withhold = func(name string) bool { return name == "AGENT_MODEL_KEY" }
	newReference(t, cfg)
	var report struct {
		Env []string `json:"env"`
	}
	readReport(t, cfg, &report)
	allowed := map[string]bool{"PATH": true, "HOME": true, "TMPDIR": true, "LANG": true, "LC_ALL": true,
		"PLUGIN_FLAG": true, "XBOT_PROVIDER_DATA_DIR": true, "PYTHONDONTWRITEBYTECODE": true}
	seen := map[string]string{}
	for _, kv := range report.Env {
		name, value, _ := strings.Cut(kv, "=")
		seen[name] = value
		if !allowed[name] {
			t.Errorf("the plugin's environment holds %s", name)
		}
	}
	if seen["PLUGIN_FLAG"] != "passed" || seen["XBOT_PROVIDER_DATA_DIR"] != cfg.DataDir {
		t.Errorf("passthrough or data dir missing: %v", seen)
	}
	for _, bad := range []string{"OTEL_", "PG", "XBOT_LLM", "CLICKHOUSE_"} {
		cfg.EnvPassthrough = []string{bad + "X"}
		if err := cfg.Validate(); err == nil {
			t.Errorf("passthrough of %sX accepted", bad)
		}
	}
}

// TestPluginCannotReadTheHostsEnvironment: the plugin runs as the host's
// user, yet cannot read the host process's environment (where xbot's
// secrets may be) through /proc. Root may read any process's: skipped as
// root, run by the unprivileged pass (test-unprivileged).
func TestPluginCannotReadTheHostsEnvironment(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every process's environment (CAP_SYS_PTRACE)")
	}
	t.Parallel()
	cfg := helperConfig(t, "peek", "")
	newReference(t, cfg)
	var report struct {
		Peek string `json:"peek"`
	}
	readReport(t, cfg, &report)
	if !strings.Contains(report.Peek, "permission denied") {
		t.Errorf("the plugin's read of /proc/<host>/environ: %q, want permission denied", report.Peek)
	}
}
