package redact_test

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/redact"
)

func TestScrubRemovesEverySpelling(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t/with+chars="
	spellings := redact.All(secret, "")
	for _, text := range []string{
		"token " + secret, url.QueryEscape(secret), "Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+secret)),
		base64.RawURLEncoding.EncodeToString([]byte("Bearer " + secret)),
	} {
		got := redact.Scrub(text, spellings)
		if strings.Contains(got, secret) || got == text {
			t.Errorf("Scrub(%q) = %q", text, got)
		}
	}
	if got := redact.Scrub("nothing here", spellings); got != "nothing here" {
		t.Errorf("Scrub changed text without the secret: %q", got)
	}
}

func TestScrubRemovesJSONSpellings(t *testing.T) {
	t.Parallel()
	const secret = `pa<ss>&"w\rd` + "\u2028x"
	spellings := redact.All(secret)
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(map[string]string{"echo": "got " + secret + " here"}); err != nil {
			t.Fatal(err)
		}
		got := redact.Scrub(b.String(), spellings)
		var back map[string]string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back["echo"] != "got "+redact.Redacted+" here" {
			t.Errorf("Scrub(%s) = %s (%v)", b.String(), got, err)
		}
	}
}
