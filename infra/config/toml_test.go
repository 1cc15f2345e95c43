package config_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

func TestTOMLValues(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeFile(t, w.tomlPath(), `# user config
kafka_brokers = ["a:9092", "b:9092"]
kafka_partitions = 24
kafka_replication_factor = -1
command_wait_default = "2s"
llm_model = 'gpt'
data_dir = ""
`)
	r := mustLoad(t, w.src)
	want := map[string]string{
		"kafka_brokers":            "a:9092,b:9092",
		"kafka_partitions":         "24",
		"kafka_replication_factor": "-1",
		"command_wait_default":     "2s",
		"llm_model":                "gpt",
	}
	for name, v := range want {
		if got := r.Value(name); got.Value != v || got.Layer != config.LayerConfigTOML {
			t.Errorf("%s = %q from %s, want %q from config_toml", name, got.Value, got.Layer, v)
		}
	}
	if got := r.Value("kafka_partitions").Origin; got != w.tomlPath()+":3" {
		t.Errorf("origin = %q, want %s:3", got, w.tomlPath())
	}
	if got := r.Value("data_dir").Layer; got != config.LayerDefault {
		t.Errorf("blank data_dir came from %s, want default", got)
	}
}

func TestTOMLBoolAndFloatAreStringified(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	writeFile(t, w.tomlPath(), "llm_model = true\nexecutor_id = 1.5\n")
	r := mustLoad(t, w.src)
	if r.Get("llm_model") != "true" || r.Get("executor_id") != "1.5" {
		t.Errorf("got %q, %q; want true, 1.5", r.Get("llm_model"), r.Get("executor_id"))
	}
}

func TestTOMLErrors(t *testing.T) {
	t.Parallel()
	const secret = "hunter2"
	tests := []struct {
		name     string
		content  string
		mentions []string // each must appear in the error; "{path}" is the file
	}{
		{"unknown keys", "kafka_brokers = \"a\"\nkafka_broker = \"b\"\n[core]\nx = 1\n",
			[]string{"{path}", "kafka_broker (line 2)", "core (line 3)"}},
		{"syntax error", "kafka_brokers = \"a\"\nllm_model = gpt\n", []string{"{path}:2:"}},
		{"secret syntax error", "pg_dsn = postgres://u:" + secret + "@h/db\n", []string{"{path}:1:", "secret"}},
		{"table value", "llm_model = { a = 1 }\n", []string{"{path}:1:", "llm_model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			writeFile(t, w.tomlPath(), tt.content)
			_, err := config.Load(w.src)
			if err == nil {
				t.Fatal("Load accepted the file")
			}
			for _, m := range tt.mentions {
				m = strings.ReplaceAll(m, "{path}", w.tomlPath())
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q leaks a secret", err)
			}
		})
	}
}
