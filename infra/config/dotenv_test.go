package config_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

func TestDotenvSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line, want string
	}{
		{"bare", "XBOT_LLM_MODEL=gpt-4o", "gpt-4o"},
		{"spaces around", "  XBOT_LLM_MODEL = gpt-4o  ", "gpt-4o"},
		{"export prefix", "export XBOT_LLM_MODEL=gpt-4o", "gpt-4o"},
		{"inline comment", "XBOT_LLM_MODEL=gpt-4o # the big one", "gpt-4o"},
		{"hash inside bare value", "XBOT_LLM_MODEL=gpt#4", "gpt#4"},
		{"double quoted", `XBOT_LLM_MODEL="a b # c"`, "a b # c"},
		{"double quoted escapes", `XBOT_LLM_MODEL="a\"b\\c\nd"`, "a\"b\\c\nd"},
		{"double quoted then comment", `XBOT_LLM_MODEL="x" # note`, "x"},
		{"single quoted literal", `XBOT_LLM_MODEL='a\n "b"'`, `a\n "b"`},
		{"equals in value", "XBOT_LLM_MODEL=a=b", "a=b"},
		{"empty is unset", "XBOT_LLM_MODEL=", ""},
		{"crlf line ending", "XBOT_LLM_MODEL=gpt\r", "gpt"},
		{"multi-line double quoted", "XBOT_LLM_MODEL=\"a\nb\"", "a\nb"},
		{"multi-line value of another tool", "KEY=\"-----BEGIN\nno equals here\n\"\nXBOT_LLM_MODEL=m", "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			writeFile(t, w.dotenvPath(), "# header comment\n\nOTHER_VAR=ignored\n"+tt.line+"\n")
			if got := mustLoad(t, w.src).Get("llm_model"); got != tt.want {
				t.Errorf("llm_model = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDotenvErrors(t *testing.T) {
	t.Parallel()
	const secret = "hunter2"
	tests := []struct {
		name    string
		content string
		line    string // expected ":N" suffix of the path
		mention string // expected in the message
	}{
		{"no equals sign", "XBOT_LLM_MODEL=x\nXBOT_PG_DSN " + secret + "\n", ":2", "malformed"},
		{"bad variable name", "\n\n1BAD=" + secret + "\n", ":3", "malformed"},
		{"unterminated double quote", `XBOT_PG_DSN="postgres://u:` + secret + "\n", ":1", "unterminated"},
		{"unterminated single quote", `XBOT_PG_DSN='` + secret + "\n", ":1", "unterminated"},
		{"text after quote", `XBOT_PG_DSN="a" ` + secret + "\n", ":1", "after closing quote"},
		{"unknown XBOT variable", "# typo\nXBOT_KAFKA_BROKER=" + secret + "\n", ":2", "XBOT_KAFKA_BROKER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, home := range []bool{false, true} {
				w := newWorld(t)
				path := w.dotenvPath()
				if home {
					path = w.homeDotenvPath()
				}
				writeFile(t, path, tt.content)
				_, err := config.Load(w.src)
				if err == nil {
					t.Fatalf("Load accepted %s", path)
				}
				msg := err.Error()
				if !strings.Contains(msg, path+tt.line+":") || !strings.Contains(msg, tt.mention) {
					t.Errorf("error %q: want %s%s and %q", msg, path, tt.line, tt.mention)
				}
				if strings.Contains(msg, secret) {
					t.Errorf("error %q leaks the line's value", msg)
				}
			}
		})
	}
}
