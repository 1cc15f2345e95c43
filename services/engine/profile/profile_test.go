package profile_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// writeAgents writes an agents.yaml into a fresh directory and returns its path.
func writeAgents(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agents.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadWithoutFileHasOnlyDemo(t *testing.T) {
	t.Parallel()
	c, err := profile.Load("")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.IDs(); !reflect.DeepEqual(got, []string{"demo"}) {
		t.Fatalf("IDs() = %q, want [demo]", got)
	}
	demo, ok := c.Get("demo")
	if !ok || !reflect.DeepEqual(demo, profile.Demo()) {
		t.Fatalf("Get(demo) = %+v, %v; want the built-in demo profile", demo, ok)
	}
	if err := demo.Validate(); err != nil {
		t.Fatalf("the demo profile is invalid: %v", err)
	}
	if c.Has("nope") {
		t.Fatal("Has(nope) = true")
	}
}

func TestLoadReadsAgents(t *testing.T) {
	t.Parallel()
	c, err := profile.Load(filepath.Join("testdata", "agents.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.IDs(); !reflect.DeepEqual(got, []string{"coder.v2", "demo", "greeter"}) {
		t.Fatalf("IDs() = %q", got)
	}
	greeter, _ := c.Get("greeter")
	want := profile.Profile{
		ID: "greeter", Model: profile.ModelScripted, SystemPrompt: "You greet people.",
		Tools:  []string{"shell", "read_file"},
		Limits: profile.Limits{MaxTurns: 4, MaxToolCalls: 10, MaxWallTime: 5 * time.Minute},
		Script: []profile.Turn{
			{Text: "Hi! You wrote: {{input}}", ChunkChars: 4, Delay: 20 * time.Millisecond},
			{Text: "Bye."},
		},
	}
	if !reflect.DeepEqual(greeter, want) {
		t.Fatalf("greeter = %+v\nwant      %+v", greeter, want)
	}
	coder, _ := c.Get("coder.v2")
	if coder.Model != "gpt-test" || coder.Limits.MaxWallTime != 90*time.Minute || coder.Script != nil {
		t.Fatalf("coder.v2 = %+v", coder)
	}
}

func TestLoadRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{
			name: "the same id twice",
			yaml: "agents:\n  - id: twin\n    model: m\n  - id: twin\n    model: m\n",
			want: []string{`"twin"`, "twice"},
		},
		{
			name: "unknown field",
			yaml: "agents:\n  - id: a\n    model: m\n    temperature: 0.2\n",
			want: []string{"temperature"},
		},
		{
			name: "unknown top-level field",
			yaml: "agent:\n  - id: a\n",
			want: []string{"agent"},
		},
		{
			name: "scripted without script",
			yaml: "agents:\n  - id: lonely\n    model: scripted\n",
			want: []string{`"lonely"`, "script"},
		},
		{
			name: "bad id",
			yaml: "agents:\n  - id: has space\n    model: m\n",
			want: []string{`"has space"`, "id"},
		},
		{
			name: "every problem reported",
			yaml: "agents:\n  - id: ok\n    model: scripted\n  - id: ''\n    model: m\n    limits:\n      maxTurns: -1\n",
			want: []string{`"ok"`, "script", "id must be", "limits must be"},
		},
		{
			name: "script on a real model",
			yaml: "agents:\n  - id: a\n    model: gpt\n    script:\n      - text: hi\n",
			want: []string{`"a"`, "model: scripted"},
		},
		{
			name: "unknown scripted error",
			yaml: "agents:\n  - id: a\n    model: scripted\n    script:\n      - error: boom\n",
			want: []string{"turn 1", `"boom"`, "rate_limited"},
		},
		{
			name: "bad sandbox env and key variable",
			yaml: "agents:\n  - id: a\n    model: m\n    apiKeyEnv: 'my key'\n    sandbox:\n      env: [NOVALUE]\n",
			want: []string{"NOVALUE", "apiKeyEnv"},
		},
		{
			name: "key variable naming an xbot setting",
			yaml: "agents:\n  - id: a\n    model: m\n    baseUrl: https://llm.example/v1\n    apiKeyEnv: XBOT_API_TOKENS\n",
			want: []string{`"a"`, "apiKeyEnv", "XBOT_API_TOKENS", "xbot's own settings"},
		},
		{
			name: "key variable naming an xbot setting in lower case",
			yaml: "agents:\n  - id: a\n    model: m\n    apiKeyEnv: xbot_pg_dsn\n",
			want: []string{"xbot_pg_dsn", "xbot's own settings"},
		},
		{
			name: "key variable naming a database password",
			yaml: "agents:\n  - id: a\n    model: m\n    apiKeyEnv: PGPASSWORD\n",
			want: []string{"PGPASSWORD", "database password"},
		},
		{
			name: "bad sandbox allowHosts",
			yaml: "agents:\n  - id: a\n    model: m\n    sandbox:\n      network: true\n      allowHosts: [10.1.2.3, 192.168.0.0/16, example.com, 'fd00::1']\n",
			want: []string{`"example.com"`, `"fd00::1"`},
		},
		{
			name: "bad duration",
			yaml: "agents:\n  - id: a\n    model: m\n    limits:\n      maxWallTime: soon\n",
			want: []string{"soon"},
		},
		{
			name: "output limits out of range",
			yaml: "agents:\n  - id: a\n    model: m\n    limits:\n      maxStreamedOutputBytes: -1\n      maxEventBytes: 1000\n",
			want: []string{"limits.maxStreamedOutputBytes must be >= 0", "limits.maxEventBytes must be at least 131072"},
		},
		{
			name: "script turn without text",
			yaml: "agents:\n  - id: a\n    model: scripted\n    script:\n      - delay: 5ms\n",
			want: []string{`"a"`, "turn 1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeAgents(t, tt.yaml)
			c, err := profile.Load(path)
			if err == nil {
				t.Fatalf("Load accepted %q: %v", tt.yaml, c.IDs())
			}
			for _, w := range append(tt.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "absent.yaml")
	if _, err := profile.Load(path); err == nil || !strings.Contains(err.Error(), "absent.yaml") {
		t.Fatalf("Load(missing) error = %v, want one naming the file", err)
	}
}

func TestLoadOverridesDemo(t *testing.T) {
	t.Parallel()
	c, err := profile.Load(writeAgents(t, `
agents:
  - id: demo
    model: scripted
    script:
      - text: "custom: {{input}}"
`))
	if err != nil {
		t.Fatal(err)
	}
	demo, _ := c.Get("demo")
	if len(demo.Script) != 1 || demo.Script[0].Text != "custom: {{input}}" || demo.SystemPrompt != "" {
		t.Fatalf("demo = %+v, want the file's profile", demo)
	}
	if got := c.IDs(); !reflect.DeepEqual(got, []string{"demo"}) {
		t.Fatalf("IDs() = %q, want [demo]", got)
	}
}

func TestTurnRender(t *testing.T) {
	t.Parallel()
	tests := []struct{ text, input, want string }{
		{"You said: {{input}}", "hi", "You said: hi"},
		{"{{input}} and {{input}}", "x", "x and x"},
		{"no placeholder", "ignored", "no placeholder"},
		{"{{input}}", "", ""},
		{"{{ input }} stays", "x", "{{ input }} stays"},
		{"nested {{input}}", "{{input}}", "nested {{input}}"},
	}
	for _, tt := range tests {
		if got := (profile.Turn{Text: tt.text}).Render(tt.input); got != tt.want {
			t.Errorf("Render(%q) of %q = %q, want %q", tt.input, tt.text, got, tt.want)
		}
	}
	demo := profile.Demo()
	if got := demo.Script[0].Render("ping"); got != "Hello from xbot! You said: ping" {
		t.Errorf("demo renders %q", got)
	}
}

func TestNewCatalogKeepsValidProfilesAndReportsInvalid(t *testing.T) {
	t.Parallel()
	c, err := profile.NewCatalog(
		profile.Profile{ID: "good", Model: "m"},
		profile.Profile{ID: "bad/id", Model: "m"},
	)
	if err == nil || !strings.Contains(err.Error(), "bad/id") {
		t.Fatalf("NewCatalog error = %v, want one naming bad/id", err)
	}
	if !c.Has("good") || c.Has("bad/id") || !c.Has("demo") {
		t.Fatalf("catalog holds %q, want demo and good", c.IDs())
	}
}

// An agents file with no document yet (empty, or every agent commented out)
// holds no agents: only demo, not a bare "EOF" error.
func TestLoadEmptyFileHasOnlyDemo(t *testing.T) {
	t.Parallel()
	for _, yaml := range []string{"", "# agents:\n#   - id: later\n"} {
		c, err := profile.Load(writeAgents(t, yaml))
		if err != nil {
			t.Fatalf("Load(%q): %v", yaml, err)
		}
		if got := c.IDs(); !reflect.DeepEqual(got, []string{"demo"}) {
			t.Fatalf("Load(%q) IDs = %q, want [demo]", yaml, got)
		}
	}
}
