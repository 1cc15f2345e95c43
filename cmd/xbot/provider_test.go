package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

// testConsole is a console of a fresh home, answering nothing.
func testConsole(t *testing.T) (console, *bytes.Buffer) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	var out bytes.Buffer
	return console{in: strings.NewReader(""), out: &out, err: &out, home: home}, &out
}

// variant copies the reference plugin under another id with a secret
// setting token.
func variant(t *testing.T, src, id string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"local-process", "xbot-provider.toml"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "xbot-provider.toml" {
			data = []byte(strings.Replace(string(data), `id = "local-process"`, `id = "`+id+`"`, 1) +
				"\n[config.fields.token]\ntype = \"string\"\nsecret = true\n")
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestProviderCommands: install asks for consent (none unattended without
// --yes), list and verify show it, compute_provider=<id> runs tools through
// it with its own settings only, a changed file is refused at start, and
// remove --purge drops its settings. Not parallel: it sets HOME.
func TestProviderCommands(t *testing.T) {
	c, out := testConsole(t)
	ref := computetest.ReferencePlugin(t)
	if err := runProvider(t.Context(), []string{"install", ref}, c); !errors.Is(err, plugin.ErrConsent) ||
		!strings.Contains(out.String(), "Runs:      ./local-process") {
		t.Fatalf("unattended install without --yes: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"install", ref, "--yes"}, {"install", "--yes", variant(t, ref, "other-lp")}} {
		if err := runProvider(t.Context(), args, c); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	out.Reset()
	if err := runProvider(t.Context(), []string{"list"}, c); err != nil || !strings.Contains(out.String(), "local-process") ||
		!strings.Contains(out.String(), "other-lp") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	t.Setenv("XBOT_COMPUTE_PROVIDER", "local-process")
	t.Setenv("XBOT_OTHER_LP_TOKEN", "other-secret")
	t.Setenv("XBOT_LLM_API_KEY", "sk-llm")
	t.Setenv("XBOT_SANDBOX_LIMITS", "rlimit")
	t.Setenv("XBOT_LOCAL_PROCESS_ROOT", filepath.Join(c.home, "boxes"))
	runThroughPlugin(t, c)
	if err := os.WriteFile(filepath.Join(c.home, ".xbot", "providers", "local-process", "extra"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := runProvider(t.Context(), []string{"verify"}, c); !errors.Is(err, plugin.ErrTampered) ||
		!strings.Contains(out.String(), "local-process: FAILED") || !strings.Contains(out.String(), "other-lp: ok") {
		t.Errorf("verify after a change: %v\n%s", err, out)
	}
	s, err := load("executor", []string{"--log-level", "error", "--compute-dir", t.TempDir()}, "json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.computeProvider(""); !errors.Is(err, plugin.ErrTampered) {
		t.Errorf("an executor with a changed plugin: %v, want ErrTampered", err)
	}
	removeWithPurge(t, c, out)
}

// runThroughPlugin starts the executor's compute provider and runs a
// command through the plugin; the plugin gets its own settings and the
// inherited sandbox_limits, never another provider's or xbot's secrets.
func runThroughPlugin(t *testing.T, c console) {
	t.Helper()
	s, err := load("executor", []string{"--log-level", "error", "--compute-dir", t.TempDir()}, "json")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.compute("")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"root": filepath.Join(c.home, "boxes"), "sandbox_limits": "rlimit"}
	if cfg.Plugin == nil || len(cfg.Plugin.Settings) != len(want) || cfg.Plugin.Settings["root"] != want["root"] ||
		cfg.Plugin.Settings["sandbox_limits"] != "rlimit" {
		t.Fatalf("the plugin's settings: %+v, want exactly %v", cfg.Plugin, want)
	}
	p, err := s.computeProvider("")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := p.Open(t.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}, RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sb.Close() }()
	var stdout bytes.Buffer
	if res, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "echo through the plugin", Stdout: &stdout}); err != nil ||
		res.ExitCode != 0 || stdout.String() != "through the plugin\n" || p.Name() != "local-process" {
		t.Fatalf("Exec = %+v, %v, %q via %s", res, err, stdout.String(), p.Name())
	}
	if _, err := os.Stat(filepath.Join(c.home, "boxes", "records")); err != nil {
		t.Errorf("the plugin did not use its root setting: %v", err)
	}
}

func removeWithPurge(t *testing.T, c console, out *bytes.Buffer) {
	t.Helper()
	xdir := filepath.Join(c.home, ".xbot")
	if err := os.WriteFile(filepath.Join(xdir, ".env"), []byte("XBOT_OTHER_LP_TOKEN=t\nXBOT_LLM_MODEL=m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := runProvider(t.Context(), []string{"remove", "other-lp"}, c); err != nil {
		t.Fatal(err)
	}
	if _, err := load("executor", []string{"--log-level", "error"}, "json"); err != nil {
		t.Fatalf("a removed provider's kept settings break the configuration: %v", err)
	}
	if err := runProvider(t.Context(), []string{"remove", "--purge", "other-lp"}, c); err != nil {
		t.Fatal(err)
	}
	if env, _ := os.ReadFile(filepath.Join(xdir, ".env")); string(env) != "XBOT_LLM_MODEL=m\n" {
		t.Errorf("~/.xbot/.env after purge: %q\n%s", env, out)
	}
}
