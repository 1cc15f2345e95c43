package config_test

import (
	"flag"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

func TestBindFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want map[string]string
	}{
		{"none set", nil, map[string]string{}},
		{"one set", []string{"--kafka-brokers=a:9092"}, map[string]string{"kafka_brokers": "a:9092"}},
		{"set to its default still counts", []string{"-api-addr", "127.0.0.1:8080", "--log-level", "debug"},
			map[string]string{"api_addr": "127.0.0.1:8080", "log_level": "debug"}},
		{"other flags ignored", []string{"--verbose", "--pg-dsn="}, map[string]string{"pg_dsn": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("xbot", flag.ContinueOnError)
			fs.Bool("verbose", false, "unrelated flag")
			collect := config.BindFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if got := collect(); !maps.Equal(got, tt.want) {
				t.Errorf("collected %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBindFlagsRegistersEveryKey(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("xbot", flag.ContinueOnError)
	config.BindFlags(fs)
	for _, k := range config.Keys() {
		f := fs.Lookup(k.Flag())
		if f == nil {
			t.Errorf("no flag --%s", k.Flag())
			continue
		}
		if f.DefValue != k.Default || !strings.Contains(f.Usage, k.Env()) {
			t.Errorf("--%s: default %q usage %q", k.Flag(), f.DefValue, f.Usage)
		}
	}
}

func TestBindFlagsFeedLoad(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.src.Env["XBOT_KAFKA_PARTITIONS"] = "6"
	fs := flag.NewFlagSet("xbot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	collect := config.BindFlags(fs)
	if err := fs.Parse([]string{"--kafka-partitions", "3"}); err != nil {
		t.Fatal(err)
	}
	w.src.Flags = collect()
	r := mustLoad(t, w.src)
	if v := r.Value("kafka_partitions"); v.Value != "3" || v.Layer != config.LayerFlag {
		t.Errorf("kafka_partitions = %q from %s, want 3 from flag", v.Value, v.Layer)
	}
	if v := r.Value("api_addr"); v.Layer != config.LayerDefault {
		t.Errorf("unset flag api_addr came from %s, want default", v.Layer)
	}
}
