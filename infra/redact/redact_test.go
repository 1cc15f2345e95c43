package redact_test

import (
	"encoding/base64"
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
