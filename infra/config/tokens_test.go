package config_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

func TestParseTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     map[string]string
	}{
		{"blank", "  ", map[string]string{}},
		{"one", "tok=acme", map[string]string{"tok": "acme"}},
		{"two with spaces", " tok1 = acme , tok2=globex ", map[string]string{"tok1": "acme", "tok2": "globex"}},
		{"trailing comma", "tok=acme,", map[string]string{"tok": "acme"}},
		{"base64 padding in token", "dG9r==acme", map[string]string{"dG9r=": "acme"}},
		{"two tokens one tenant", "a=t,b=t", map[string]string{"a": "t", "b": "t"}},
		{"principals", "a=acme/alice, b=acme/bob/read+demo", map[string]string{"a": "acme/alice", "b": "acme/bob/read+demo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := config.ParseTokens(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseTokensErrors(t *testing.T) {
	t.Parallel()
	const tok = "sekret-token-42"
	tests := []struct {
		name, in string
		mentions []string
	}{
		{"empty token", "=acme", []string{"entry 1", "empty token"}},
		{"empty tenant", "ok=acme," + tok + "=", []string{"entry 2", "empty tenant"}},
		{"missing equals", tok, []string{"entry 1", `missing "="`}},
		{"duplicate", tok + "=a,x=b," + tok + "=c", []string{"entry 3", "duplicate", "entry 1"}},
		{"whitespace in token", "sekret token-42=a", []string{"entry 1", "whitespace"}},
		{"all problems reported", tok + ",=a,b=", []string{"entry 1", "entry 2", "entry 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.ParseTokens(tt.in)
			if err == nil {
				t.Fatal("ParseTokens accepted bad input")
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			for _, leak := range []string{tok, "sekret"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error %q contains the token", err)
				}
			}
		})
	}
}
