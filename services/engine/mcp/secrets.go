package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/xbot-runtime/xbot/infra/redact"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Secrets are the runtime secrets MCP header templates name (config
// mcp_secrets). They are put into requests by the runtime only; a nil
// *Secrets holds none. Safe for concurrent use (immutable).
type Secrets struct {
	values    map[string]string
	spellings []string
}

// NewSecrets holds values by name.
func NewSecrets(values map[string]string) *Secrets {
	s := &Secrets{values: make(map[string]string, len(values))}
	all := make([]string, 0, len(values))
	for k, v := range values {
		s.values[k] = v
		all = append(all, v)
	}
	s.spellings = redact.All(all...)
	return s
}

// String never shows a value.
func (s *Secrets) String() string { return fmt.Sprintf("%d MCP secrets", s.len()) }

func (s *Secrets) len() int {
	if s == nil {
		return 0
	}
	return len(s.values)
}

// Missing returns the names of names that hold no secret, sorted.
func (s *Secrets) Missing(names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := s.lookup(n); !ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (s *Secrets) lookup(name string) (string, bool) {
	if s == nil {
		return "", false
	}
	v, ok := s.values[name]
	return v, ok
}

// ErrMissingSecret means a header names a secret the runtime does not hold.
var ErrMissingSecret = errors.New("the runtime holds no secret of that name (mcp_secrets)")

// Expand fills a header template (profile.ParseHeaderTemplate) with the
// secrets it names. Errors name the secret, never a value.
func (s *Secrets) Expand(template string) (string, error) {
	parts, err := profile.ParseHeaderTemplate(template)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Secret == "" {
			b.WriteString(p.Text)
			continue
		}
		v, ok := s.lookup(p.Secret)
		if !ok {
			return "", fmt.Errorf("secret %s: %w", p.Secret, ErrMissingSecret)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// Scrub replaces every secret, in every spelling a server may echo it in
// (redact.Spellings), by redact.Redacted.
func (s *Secrets) Scrub(text string) string {
	if s == nil {
		return text
	}
	return redact.Scrub(text, s.spellings)
}

// scrubbedJSON encodes v and removes every secret from its text with scrub;
// a value that no longer parses once scrubbed (a secret spanned its syntax)
// is refused.
func scrubbedJSON(v any, scrub func(string) string) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := scrub(string(raw))
	if !json.Valid([]byte(s)) {
		return nil, errors.New("it held a secret of the runtime")
	}
	return json.RawMessage(s), nil
}
