package config_test

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

// tokenProblem is every message ParseTokens may give for one entry: none
// holds any text of the input, so no token can leak through an error.
var tokenProblem = regexp.MustCompile(`^api_tokens entry [0-9]+: (missing "=" \(want token=tenant\)|empty token|` +
	`empty tenant|token contains whitespace|principal contains whitespace|duplicate token \(same as entry [0-9]+\))$`)

// FuzzParseTokens: ParseTokens never panics; an error lists one known
// message per bad entry and no input text; an accepted map holds trimmed,
// non-empty tokens without whitespace or commas and tenants without "=" or
// commas, and the map written back as "token=tenant, …," parses to itself.
func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{"", " ", "tok=acme", " a = t , b=t ,", "dG9r==acme", "a=t,a=u", "=t,a=,x,a b=t",
		",,,", "a\u00a0b=t", "tok=ac=me", "t\tok=acme", "a=t\n,b=u\r", "t=acme/al ice/read"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries := len(strings.Split(s, ","))
		got, err := config.ParseTokens(s)
		if err != nil {
			problems := strings.Split(err.Error(), "\n")
			if len(problems) > entries {
				t.Fatalf("%d problems for %d entries: %q", len(problems), entries, err)
			}
			for _, p := range problems {
				if !tokenProblem.MatchString(p) {
					t.Fatalf("problem %q is not one ParseTokens documents", p)
				}
			}
			return
		}
		if len(got) > entries {
			t.Fatalf("%d tokens from %d entries", len(got), entries)
		}
		var parts []string
		for _, tok := range slices.Sorted(maps.Keys(got)) {
			ten := got[tok]
			if tok == "" || ten == "" || strings.TrimSpace(tok) != tok || strings.TrimSpace(ten) != ten ||
				strings.ContainsAny(tok, " \t\r\n,") || strings.ContainsAny(ten, "=,") {
				t.Fatalf("accepted token %q for tenant %q", tok, ten)
			}
			parts = append(parts, tok+"="+ten)
		}
		again, err := config.ParseTokens(strings.Join(parts, ", ") + ",")
		if err != nil || !maps.Equal(again, got) {
			t.Fatalf("written back: %v, %q then %q", err, got, again)
		}
	})
}
