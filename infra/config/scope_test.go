package config_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

var scopes = []config.Scope{
	{ID: "my-cloud", Fields: []config.ScopedField{{Name: "token", Secret: true}, {Name: "region", Default: "eu"}}},
	{ID: "other", Fields: []config.ScopedField{{Name: "token", Secret: true}, {Name: "region"}}},
}

func writeHome(t *testing.T, files map[string]string) string {
	t.Helper()
	home := t.TempDir()
	for name, data := range files {
		p := filepath.Join(home, ".xbot", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func scopedOf(r *config.Resolved, id string) map[string]config.Value {
	out := map[string]config.Value{}
	for _, v := range r.Scoped(id) {
		out[v.Key.Field()] = v
	}
	return out
}

// TestScopedSettingsLayers: a provider's setting comes from its one
// variable, the dotenv files or its config.toml table, in the usual order,
// and is read for that provider only.
func TestScopedSettingsLayers(t *testing.T) {
	t.Parallel()
	home := writeHome(t, map[string]string{
		"config.toml": "api_addr = \"127.0.0.1:1\"\n[providers.my-cloud]\nregion = \"us\"\n[providers.other]\nregion = \"ap\"\n",
		".env":        "XBOT_MY_CLOUD_TOKEN=from-home-dotenv\n",
	})
	r, err := config.Load(config.Sources{Env: map[string]string{"XBOT_OTHER_TOKEN": "tok-other"}, WorkDir: t.TempDir(),
		HomeDir: home, Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	mine, other := scopedOf(r, "my-cloud"), scopedOf(r, "other")
	if v := mine["token"]; v.Value != "from-home-dotenv" || v.Layer != config.LayerHomeDotenv || v.Key.Env() != "XBOT_MY_CLOUD_TOKEN" {
		t.Errorf("my-cloud token %+v", v)
	}
	if mine["region"].Value != "us" || other["region"].Value != "ap" || other["token"].Value != "tok-other" {
		t.Errorf("regions %q %q, other's token %q", mine["region"].Value, other["region"].Value, other["token"].Value)
	}
	r, err = config.Load(config.Sources{Env: map[string]string{}, WorkDir: t.TempDir(), HomeDir: t.TempDir(), Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	if v := scopedOf(r, "my-cloud")["region"]; v.Value != "eu" || v.Layer != config.LayerDefault {
		t.Errorf("default region %+v", v)
	}
	if v := scopedOf(r, "other")["token"]; v.IsSet() {
		t.Errorf("other's token resolved to %+v with nothing set for it", v)
	}
}

func TestScopedSettingsRefused(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		files  map[string]string
		scopes []config.Scope
		want   string
	}{
		"unknown provider table": {map[string]string{"config.toml": "[providers.nope]\nx = 1\n"}, scopes, "no such provider"},
		"unknown field":          {map[string]string{"config.toml": "[providers.my-cloud]\nzone = 1\n"}, scopes, "has no setting zone"},
		"unknown variable":       {map[string]string{".env": "XBOT_MY_CLOUD_ZONE=1\n"}, scopes, "unknown variable XBOT_MY_CLOUD_ZONE"},
		"core collision":         {nil, []config.Scope{{ID: "api", Fields: []config.ScopedField{{Name: "addr"}}}}, "xbot's api_addr"},
		"scope collision": {nil, []config.Scope{{ID: "a-b", Fields: []config.ScopedField{{Name: "c"}}},
			{ID: "a", Fields: []config.ScopedField{{Name: "b_c"}}}}, "names both"},
	} {
		_, err := config.Load(config.Sources{Env: map[string]string{}, WorkDir: t.TempDir(), HomeDir: writeHome(t, c.files), Scopes: c.scopes})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
}

func TestExplainShowsScopedSettingsRedacted(t *testing.T) {
	t.Parallel()
	r, err := config.Load(config.Sources{Env: map[string]string{"XBOT_MY_CLOUD_TOKEN": "sk-very-secret"}, WorkDir: t.TempDir(),
		HomeDir: t.TempDir(), Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.Explain(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if strings.Contains(text, "sk-very-secret") {
		t.Errorf("explain shows a provider's secret:\n%s", text)
	}
	for _, want := range []string{"providers.my-cloud.token", config.Redacted, "XBOT_MY_CLOUD_TOKEN", "providers.my-cloud.region", "eu"} {
		if !strings.Contains(text, want) {
			t.Errorf("explain lacks %q:\n%s", want, text)
		}
	}
	if u := config.UnknownEnv(map[string]string{"XBOT_MY_CLOUD_TOKEN": "x", "XBOT_NOPE": "y"}, scopes...); len(u) != 1 || u[0] != "XBOT_NOPE" {
		t.Errorf("UnknownEnv = %v", u)
	}
}

func TestPurgeScope(t *testing.T) {
	t.Parallel()
	home := writeHome(t, map[string]string{
		"config.toml": "api_addr = \"x\"\n[providers.my-cloud]\nregion = \"us\"\n[providers.other]\nregion = \"ap\"\n",
		".env":        "XBOT_MY_CLOUD_TOKEN=t\nXBOT_OTHER_TOKEN=o\nexport XBOT_MY_CLOUD_REGION=r\n",
	})
	removed, err := config.PurgeScope(home, scopes[0])
	if err != nil || len(removed) != 4 {
		t.Fatalf("PurgeScope: %v, %v", removed, err)
	}
	toml, _ := os.ReadFile(filepath.Join(home, ".xbot", "config.toml"))
	env, _ := os.ReadFile(filepath.Join(home, ".xbot", ".env"))
	if string(toml) != "api_addr = \"x\"\n[providers.other]\nregion = \"ap\"\n" || string(env) != "XBOT_OTHER_TOKEN=o\n" {
		t.Errorf("after purge:\n%s\n%s", toml, env)
	}
}

// TestPurgeScopeEveryForm: a provider's settings written as dotted keys
// or an inline table (in [providers] or at the top) are removed too; left
// behind, they would name a provider no longer installed and the next
// load would refuse the file.
func TestPurgeScopeEveryForm(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"providers.my-cloud.region = \"us\"\nproviders.other.region = \"ap\"\n[server]\n":        "providers.other.region = \"ap\"\n[server]\n",
		"[providers]\nmy-cloud = { region = \"us\" }\nother.region = \"ap\"\n":                   "[providers]\nother.region = \"ap\"\n",
		"[providers]\n\"my-cloud\".region = \"us\"\nmy-cloud.token = \"t\"\n# my-cloud = kept\n": "[providers]\n# my-cloud = kept\n",
		"[providers.my-cloud.extra] # note\nx = 1\n[providers.other]\nregion = \"ap\"\n":         "[providers.other]\nregion = \"ap\"\n",
	} {
		home := writeHome(t, map[string]string{"config.toml": in})
		if _, err := config.PurgeScope(home, scopes[0]); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(home, ".xbot", "config.toml")); string(got) != want {
			t.Errorf("purge of\n%s\nleft\n%s\nwant\n%s", in, got, want)
		}
	}
}
