package logging_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/logging"
)

func TestJSONFormat(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := logging.New(logging.Config{Level: "info", Format: "json", Output: &buf})
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hidden")
	log.Info("run started", zap.String("run_id", "r1"), zap.Int64("seq", 3))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("got %d lines, want 1 (debug filtered):\n%s", len(lines), buf.String())
	}
	var entry map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &entry); err != nil {
		t.Fatalf("not JSON: %v: %s", err, lines[0])
	}
	if entry["msg"] != "run started" || entry["level"] != "info" || entry["run_id"] != "r1" || entry["seq"] != 3.0 {
		t.Errorf("entry = %v", entry)
	}
	ts, _ := entry["ts"].(string)
	if _, err := time.Parse("2006-01-02T15:04:05.000Z0700", ts); err != nil {
		t.Errorf("ts %q is not ISO8601: %v", ts, err)
	}
}

func TestConsoleFormat(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := logging.New(logging.Config{Level: "DEBUG", Format: "console", Output: &buf})
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hello", zap.String("tenant_id", "acme"))
	out := buf.String()
	if !strings.Contains(out, "DEBUG") || !strings.Contains(out, "hello") || !strings.Contains(out, `"tenant_id": "acme"`) {
		t.Errorf("console output = %q", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colors written to a non-terminal: %q", out)
	}
}

func TestDefaultsAreValid(t *testing.T) {
	t.Parallel()
	if err := (logging.Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      logging.Config
		mentions []string
	}{
		{"bad level", logging.Config{Level: "verbose"}, []string{`"verbose"`, "debug, info, warn, error"}},
		{"bad format", logging.Config{Format: "xml"}, []string{`"xml"`, "console", "json"}},
		{"both bad", logging.Config{Level: "loud", Format: "xml"}, []string{"loud", "xml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			if err == nil {
				t.Fatal("Validate accepted the config")
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if _, err := logging.New(tt.cfg); err == nil {
				t.Error("New accepted the config")
			}
		})
	}
}
