package main

import (
	"slices"
	"testing"

	"github.com/xbot-runtime/xbot/services/profile"
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
