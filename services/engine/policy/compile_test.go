package policy_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/policy"
)

func TestCompileRejects(t *testing.T) {
	t.Parallel()
	ok := policy.Rule{ID: "ok", Tool: "shell", Action: policy.Deny}
	with := func(edit func(*policy.Rule)) policy.Rule {
		r := ok
		edit(&r)
		return r
	}
	tests := []struct {
		name string
		cfg  policy.Config
		want []string // each must appear in the error
	}{
		{"missing id", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.ID = "" })}},
			[]string{`rules[0] (id "")`, "id is required"}},
		{"bad id", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.ID = "No Spaces" })}},
			[]string{`rules[0] (id "No Spaces")`, "id must match"}},
		{"id too long", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.ID = strings.Repeat("a", 65) })}},
			[]string{"id must match"}},
		{"id starting with a dot", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.ID = ".x" })}},
			[]string{"id must match"}},
		{"duplicate id", policy.Config{Rules: []policy.Rule{ok, with(func(r *policy.Rule) { r.Tool = "*" })}},
			[]string{`rules[1] (id "ok"): duplicate id (also rules[0])`}},
		{"reserved prefix", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.ID = "default.network" })}},
			[]string{`rules[0] (id "default.network")`, "reserved"}},
		{"empty tool", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.Tool = "" })}},
			[]string{"tool is required"}},
		{"empty action", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.Action = "" })}},
			[]string{`action: "" is not one of allow, require_approval, deny`}},
		{"bad action", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.Action = "block" })}},
			[]string{`action: "block"`}},
		{"bad pattern", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.Pattern = "(" })}},
			[]string{"pattern: error parsing regexp"}},
		{"lookahead is not RE2", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.Pattern = "rm(?!x)" })}},
			[]string{"pattern: error parsing regexp"}},
		{"bad unless", policy.Config{Rules: []policy.Rule{with(func(r *policy.Rule) { r.Unless = "[z-a]" })}},
			[]string{"unless: error parsing regexp"}},
		{"bad default", policy.Config{Default: "maybe"}, []string{`default: "maybe" is not one of`}},
		{"every problem at once", policy.Config{
			Rules: []policy.Rule{
				{ID: "a", Tool: "shell", Action: policy.Allow},
				{Tool: "", Action: "nope", Pattern: "("},
				{ID: "a", Tool: "x", Action: policy.Deny, Unless: "("},
			},
			Default: "maybe",
		}, []string{
			`rules[1] (id ""): id is required`, `rules[1] (id ""): tool is required`, `rules[1] (id ""): action: "nope"`,
			`rules[1] (id ""): pattern:`, `rules[2] (id "a"): duplicate id (also rules[0])`, `rules[2] (id "a"): unless:`,
			`default: "maybe"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := policy.Compile(tt.cfg)
			if err == nil || p != nil {
				t.Fatalf("Compile = %v, %v; want an error", p, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
			if err2 := tt.cfg.Validate(); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Validate = %v, want Compile's error", err2)
			}
		})
	}
}

func TestCompileAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  policy.Config
	}{
		{"zero config", policy.Config{}},
		{"every action", policy.Config{Rules: []policy.Rule{
			{ID: "a", Tool: "shell", Action: policy.Allow},
			{ID: "b.c_d-9", Tool: "*", Action: policy.RequireApproval, Pattern: "x", Unless: "y"},
			{ID: "0", Tool: "write_file", Argument: "path", Action: policy.Deny},
		}, Default: policy.Deny}},
		{"default. ids without the built-in rules", policy.Config{Rules: []policy.Rule{
			{ID: "default.network", Tool: "shell", Action: policy.Deny},
		}, NoDefaults: true}},
		{"64-character id", policy.Config{Rules: []policy.Rule{
			{ID: strings.Repeat("a", 64), Tool: "shell", Action: policy.Deny},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := policy.Compile(tt.cfg); err != nil {
				t.Fatal(err)
			}
			if err := tt.cfg.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
