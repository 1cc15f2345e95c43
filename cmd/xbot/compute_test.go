package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// TestDemoUsesTheConfiguredModel: with llm_base_url and llm_model set the
// built-in demo agent runs on that model with the built-in tools; without
// them it plays its script; half a configuration is an error.
func TestDemoUsesTheConfiguredModel(t *testing.T) {
	cases := []struct {
		name    string
		flags   []string
		scripts bool
		err     bool
	}{
		{name: "nothing set", scripts: true},
		{name: "model configured", flags: []string{"--llm-base-url", "http://localhost:11434/v1", "--llm-model", "qwen2.5"}},
		{name: "only a URL", flags: []string{"--llm-base-url", "http://localhost:11434/v1"}, err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := load("dev", append([]string{"--log-level", "error"}, tc.flags...), "console")
			if err != nil {
				t.Fatal(err)
			}
			cat, err := profile.NewCatalog()
			if err != nil {
				t.Fatal(err)
			}
			llm, got, err := s.llm(cat)
			if tc.err {
				if err == nil {
					t.Fatal("half an LLM configuration was accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			demo, _ := got.Get("demo")
			if tc.scripts {
				if demo.Model != profile.ModelScripted || llm.Configured() {
					t.Errorf("demo %+v, llm %+v: want the scripted demo", demo, llm)
				}
				return
			}
			if demo.Model == profile.ModelScripted || !slices.Equal(demo.Tools, profile.DemoTools) || llm.Model != "qwen2.5" {
				t.Errorf("demo %+v, llm %+v: want the configured model with the built-in tools", demo, llm)
			}
		})
	}
}

// TestSplitAPIAndExecutorNeedTheCommandSigningKey: run apart, the API and
// the executor refuse to start without command_signing_key (they could not
// agree on a generated one), naming the setting; a malformed key is refused
// without echoing its secret.
func TestSplitAPIAndExecutorNeedTheCommandSigningKey(t *testing.T) {
	s, err := settingsFrom(map[string]string{}, "json")
	if err != nil {
		t.Fatal(err)
	}
	s.needsCommandKey = true
	if _, err := s.commandKeys(); err == nil || !strings.Contains(err.Error(), "command_signing_key is required") {
		t.Fatalf("no key: err = %v", err)
	}
	s, err = settingsFrom(map[string]string{"command_signing_key": "k1:c2hvcnQtc2VjcmV0"}, "json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.commandKeys(); err == nil || strings.Contains(err.Error(), "c2hvcnQtc2VjcmV0") {
		t.Fatalf("short key: err = %v, want a refusal without the secret", err)
	}
}
