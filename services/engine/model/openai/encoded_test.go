package openai_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/openai"
)

// TestAPIKeyRedactedInEncodedForms checks the key is scrubbed from error
// text that echoes it base64-encoded (alone, inside a longer base64 text at
// any alignment, as the Authorization header) or URL-escaped, and that the
// tenant-facing summary carries none of the server's text.
func TestAPIKeyRedactedInEncodedForms(t *testing.T) {
	t.Parallel()
	const key = "sk-live+Secret/Key=0123456789"
	b64 := base64.StdEncoding.EncodeToString
	echoes := map[string]string{
		"base64":             b64([]byte(key)),
		"base64url":          base64.RawURLEncoding.EncodeToString([]byte(key)),
		"base64 of header":   b64([]byte("Bearer " + key)),
		"base64 in context1": b64([]byte("x" + key + "tail")),
		"base64 in context2": b64([]byte("xy" + key + "tail")),
		"url-escaped":        url.QueryEscape(key),
	}
	for name, echo := range echoes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
				http.Error(w, `{"error":{"message":"bad credential `+echo+` for `+key+`","type":"invalid_request_error"}}`,
					http.StatusUnauthorized)
			})
			p, _ := newProvider(t, srv.URL, func(c *openai.Config) { c.APIKey, c.MaxRetries = key, -1 })
			_, _, err := call(t, p)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), echo) || strings.Contains(err.Error(), key) {
				t.Fatalf("error leaks the key: %v", err)
			}
			if got, want := model.Summary(err), "model provider returned HTTP 401 (authentication)"; got != want {
				t.Errorf("summary %q, want %q", got, want)
			}
		})
	}
}

// TestBaseURLErrorsHideCredentials checks a rejected base URL is not quoted
// with its password or query.
func TestBaseURLErrorsHideCredentials(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"ftp://u:sk-in-userinfo@llm.example/v1?key=sk-in-query", "https://u:sk-in-userinfo@llm.example/%zz", "https:///v1?key=sk-in-query"} {
		_, err := openai.New(openai.Config{BaseURL: base, APIKey: "k", Model: "m"})
		if err == nil {
			t.Errorf("%s accepted", base)
			continue
		}
		if strings.Contains(err.Error(), "sk-in-") {
			t.Errorf("error shows a credential: %v", err)
		}
	}
}
