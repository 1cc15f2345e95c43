package config_test

import (
	"fmt"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

// layerSet gives kafka_brokers' value in each layer; "-" means the layer
// does not mention the key at all.
type layerSet struct{ flag, env, dotenv, homeDotenv, toml string }

func (s layerSet) apply(t *testing.T, w *fakeWorld) {
	t.Helper()
	if s.flag != "-" {
		w.src.Flags = map[string]string{"kafka_brokers": s.flag}
	}
	if s.env != "-" {
		w.src.Env["XBOT_KAFKA_BROKERS"] = s.env
	}
	if s.dotenv != "-" {
		writeFile(t, w.dotenvPath(), fmt.Sprintf("XBOT_KAFKA_BROKERS=%q\n", s.dotenv))
	}
	if s.homeDotenv != "-" {
		writeFile(t, w.homeDotenvPath(), fmt.Sprintf("XBOT_KAFKA_BROKERS=%q\n", s.homeDotenv))
	}
	if s.toml != "-" {
		writeFile(t, w.tomlPath(), fmt.Sprintf("kafka_brokers = %q\n", s.toml))
	}
}

func TestLoadLayerPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		set       layerSet
		wantValue string
		wantLayer config.Layer
		wantOrig  func(w *fakeWorld) string
	}{
		{"flag beats all", layerSet{"f:1", "e:1", "d:1", "h:1", "t:1"}, "f:1", config.LayerFlag,
			func(*fakeWorld) string { return "--kafka-brokers" }},
		{"env beats files", layerSet{"-", "e:1", "d:1", "h:1", "t:1"}, "e:1", config.LayerEnv,
			func(*fakeWorld) string { return "XBOT_KAFKA_BROKERS" }},
		{"dotenv beats home", layerSet{"-", "-", "d:1", "h:1", "t:1"}, "d:1", config.LayerDotenv,
			func(w *fakeWorld) string { return w.dotenvPath() + ":1" }},
		{"home dotenv beats toml", layerSet{"-", "-", "-", "h:1", "t:1"}, "h:1", config.LayerHomeDotenv,
			func(w *fakeWorld) string { return w.homeDotenvPath() + ":1" }},
		{"toml beats default", layerSet{"-", "-", "-", "-", "t:1"}, "t:1", config.LayerConfigTOML,
			func(w *fakeWorld) string { return w.tomlPath() + ":1" }},
		{"default when nothing set", layerSet{"-", "-", "-", "-", "-"}, "", config.LayerDefault,
			func(*fakeWorld) string { return "default" }},
		{"blank flag falls through", layerSet{"", "e:1", "-", "-", "-"}, "e:1", config.LayerEnv,
			func(*fakeWorld) string { return "XBOT_KAFKA_BROKERS" }},
		{"whitespace env falls through", layerSet{"-", "  ", "d:1", "-", "-"}, "d:1", config.LayerDotenv,
			func(w *fakeWorld) string { return w.dotenvPath() + ":1" }},
		{"blank dotenv falls through", layerSet{"-", "-", "", "h:1", "-"}, "h:1", config.LayerHomeDotenv,
			func(w *fakeWorld) string { return w.homeDotenvPath() + ":1" }},
		{"blank home dotenv falls through", layerSet{"-", "-", "-", " ", "t:1"}, "t:1", config.LayerConfigTOML,
			func(w *fakeWorld) string { return w.tomlPath() + ":1" }},
		{"blank everywhere is default", layerSet{"", "", "", "", ""}, "", config.LayerDefault,
			func(*fakeWorld) string { return "default" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			tt.set.apply(t, w)
			got := mustLoad(t, w.src).Value("kafka_brokers")
			if got.Value != tt.wantValue || got.Layer != tt.wantLayer || got.Origin != tt.wantOrig(w) {
				t.Errorf("got %q from %s (%s), want %q from %s (%s)",
					got.Value, got.Layer, got.Origin, tt.wantValue, tt.wantLayer, tt.wantOrig(w))
			}
			if got.Key.Name != "kafka_brokers" {
				t.Errorf("Key.Name = %q", got.Key.Name)
			}
		})
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	r := mustLoad(t, newWorld(t).src)
	want := map[string]string{
		"kafka_partitions":         "12",
		"kafka_replication_factor": "-1",
		"api_addr":                 "127.0.0.1:8080",
		"metrics_addr":             "127.0.0.1:9464",
		"dev_kafka_addr":           "127.0.0.1:9092",
		"log_level":                "info",
		"command_wait_default":     "5s",
		"command_wait_max":         "30s",
		"pg_dsn":                   "",
		"log_format":               "",
	}
	for name, def := range want {
		if v := r.Value(name); v.Value != def || v.Layer != config.LayerDefault {
			t.Errorf("%s = %q from %s, want default %q", name, v.Value, v.Layer, def)
		}
	}
}

func TestLoadLayersArePerKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeFile(t, w.dotenvPath(), "XBOT_API_ADDR=:9000\n")
	writeFile(t, w.homeDotenvPath(), "XBOT_API_ADDR=:1\nXBOT_LLM_MODEL=gpt\n")
	r := mustLoad(t, w.src)
	if got := r.Value("api_addr"); got.Value != ":9000" || got.Layer != config.LayerDotenv {
		t.Errorf("api_addr = %q from %s, want :9000 from dotenv", got.Value, got.Layer)
	}
	if got := r.Value("llm_model"); got.Value != "gpt" || got.Layer != config.LayerHomeDotenv {
		t.Errorf("llm_model = %q from %s, want gpt from home_dotenv", got.Value, got.Layer)
	}
}

func TestLoadIgnoresUnrelatedEnv(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.src.Env = map[string]string{"PATH": "/bin", "XBOT_NOT_A_KEY": "x", "XBOT_LLM_MODEL": "m"}
	r := mustLoad(t, w.src)
	if got := r.Get("llm_model"); got != "m" {
		t.Errorf("llm_model = %q, want m", got)
	}
	unknown := config.UnknownEnv(w.src.Env)
	if len(unknown) != 1 || unknown[0] != "XBOT_NOT_A_KEY" {
		t.Errorf("UnknownEnv = %v, want [XBOT_NOT_A_KEY]", unknown)
	}
}

func TestLoadRejectsUnknownFlagKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.src.Flags = map[string]string{"kafka_brokerz": "x"}
	if _, err := config.Load(w.src); err == nil {
		t.Fatal("Load accepted a flag for an unregistered key")
	}
}
