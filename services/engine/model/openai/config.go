package openai

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/infra/redact"
)

// Defaults for Config fields left zero.
const (
	// DefaultMaxRetries bounds attempts at one call to four: enough to ride out
	// a rate-limit window or a rolling restart, few enough that a dead server
	// fails the run within about a minute.
	DefaultMaxRetries = 3
	// DefaultTimeout is how long a call may wait for the first byte of the
	// response. Reasoning models and cold local servers (llama.cpp, Ollama
	// loading weights) can take tens of seconds before the first chunk.
	DefaultTimeout = 60 * time.Second
)

// Config configures a Provider.
type Config struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1,
	// https://api.deepseek.com/v1, http://localhost:11434/v1 (Ollama),
	// http://localhost:8080/v1 (llama.cpp). Required; http or https. Calls go
	// to BaseURL + "/chat/completions"; a trailing slash and a query string
	// (Azure's api-version) are kept in the right place.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <APIKey>" when not empty. It is
	// redacted from every error message. Optional (local servers need none).
	APIKey string
	// Model is the default model name; Request.Model overrides it. One of the
	// two must be set for each call.
	Model string
	// HTTPClient sends the requests. Default: a client with no overall timeout
	// (a stream may legitimately last many minutes; Timeout bounds the wait
	// for the first byte instead).
	HTTPClient *http.Client
	// MaxRetries is how many times a failed call is repeated when repeating is
	// safe. Default DefaultMaxRetries; negative disables retries.
	MaxRetries int
	// Backoff returns the wait before retry number attempt (1-based). A
	// Retry-After or retry-after-ms response header of at most a minute takes
	// precedence. Default DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// Timeout bounds the wait for the first byte of the response body; it is
	// not a limit on the whole stream. Default DefaultTimeout; negative
	// disables it.
	Timeout time.Duration
	// ExtraHeaders are added to every request, after Authorization (so they may
	// replace it, e.g. Azure's api-key). Values of headers whose name mentions
	// key, auth, token or secret are redacted from error messages too.
	ExtraHeaders map[string]string
}

func (c *Config) setDefaults() {
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.Backoff == nil {
		c.Backoff = DefaultBackoff
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
}

// Validate reports every problem with the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.BaseURL == "" {
		errs = append(errs, errors.New("BaseURL is required"))
	} else if _, err := endpoint(c.BaseURL); err != nil {
		errs = append(errs, err)
	}
	for name := range c.ExtraHeaders {
		if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " :\r\n") {
			errs = append(errs, fmt.Errorf("ExtraHeaders: invalid header name %q", name))
		}
	}
	return errors.Join(errs...)
}

// endpoint returns the chat completions URL under base.
func endpoint(base string) (string, error) {
	// The errors show the URL without its password or query, and never
	// url.Parse's own message, which quotes the URL whole: a base URL can
	// carry a key, and these errors can reach a run's events.
	u, err := url.Parse(base)
	if err != nil {
		return "", errors.New("BaseURL is not a valid URL")
	}
	shown := *u
	shown.RawQuery = ""
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("BaseURL %q: scheme must be http or https", shown.Redacted())
	}
	if u.Host == "" {
		return "", fmt.Errorf("BaseURL %q: no host", shown.Redacted())
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	return u.String(), nil
}

// secrets lists the values that must never appear in an error message, each
// also in the encodings a server may echo it in (base64, URL escaping).
func (c Config) secrets() []string {
	var s []string
	if c.APIKey != "" {
		s = append(s, spellings(c.APIKey)...)
	}
	for name, v := range c.ExtraHeaders {
		n := strings.ToLower(name)
		sensitive := strings.Contains(n, "key") || strings.Contains(n, "auth") ||
			strings.Contains(n, "token") || strings.Contains(n, "secret")
		if sensitive && v != "" {
			s = append(s, spellings(v)...)
		}
	}
	return s
}

// spellings are secret's spellings a server may echo (redact.Spellings).
func spellings(secret string) []string { return redact.Spellings(secret) }
