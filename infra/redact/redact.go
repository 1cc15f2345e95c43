// Package redact removes secrets from text that leaves the runtime's trust
// boundary (error messages, tool results, log lines): each secret in every
// spelling a server may echo it in.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Redacted replaces a secret in scrubbed text.
const Redacted = "[redacted]"

// Spellings returns secret as written, URL-escaped, escaped inside a JSON
// string (with and without HTML escapes) and base64-encoded (standard and
// URL alphabets, padded or not, also as "Bearer <secret>"), plus the part of
// its base64 form that every base64 text containing it shares whatever its
// alignment. Longest first, so that a longer spelling is replaced whole.
func Spellings(secret string) []string {
	out := []string{secret, url.QueryEscape(secret), url.PathEscape(secret), jsonEscaped(secret, true), jsonEscaped(secret, false)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString([]byte(secret)), enc.EncodeToString([]byte("Bearer "+secret)))
	}
	out = append(out, base64Cores(secret)...)
	sortLongestFirst(out)
	return slices.Compact(out)
}

// All returns the spellings of every non-empty secret, longest first.
func All(secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		if s != "" {
			out = append(out, Spellings(s)...)
		}
	}
	sortLongestFirst(out)
	return slices.Compact(out)
}

func sortLongestFirst(s []string) {
	slices.SortFunc(s, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
}

// Scrub replaces every spelling (from Spellings or All) in text by Redacted.
func Scrub(text string, spellings []string) string {
	for _, s := range spellings {
		if s != "" && strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, Redacted)
		}
	}
	return text
}

// minCore is the shortest base64 core worth scrubbing: shorter runs occur
// in ordinary text by chance.
const minCore = 8

// base64Cores returns, for each of the three byte alignments secret can
// have inside a longer base64 text, the characters that depend on secret
// alone.
func base64Cores(secret string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for o := range 3 {
			e := enc.EncodeToString(append(make([]byte, o), secret...))
			start, end := (4*o+2)/3, 8*(o+len(secret))/6
			if end-start >= minCore {
				out = append(out, e[start:end])
			}
		}
	}
	return out
}

// jsonEscaped is secret as it is written inside a JSON string, with or
// without the HTML escapes (\u003c for <) Go's encoder adds by default.
func jsonEscaped(secret string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(secret) // a string always encodes
	s := strings.TrimSuffix(b.String(), "\n")
	return s[1 : len(s)-1]
}
