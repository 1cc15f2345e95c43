package config

import (
	"errors"
	"fmt"
	"strings"
)

// ParseTokens parses an api_tokens value, "token=tenant,token2=tenant2", into
// a map from token to the principal it speaks for: "tenant" (its actor is
// the tenant, its scope full), "tenant/actor" or "tenant/actor/scope+scope"
// (services/api.ParsePrincipal checks the parts). Whitespace around entries, tokens and tenants is
// trimmed and empty entries (e.g. a trailing comma) are skipped; a blank value
// yields an empty map. The last "=" of an entry separates token and tenant, so
// tokens may contain "=" (base64 padding) but tenants may not.
//
// Errors report every bad entry by its 1-based position (empty token, empty
// tenant, missing "=", whitespace inside a token or principal, duplicate
// token) and never
// contain a token: tokens are secrets.
func ParseTokens(s string) (map[string]string, error) {
	tokens := make(map[string]string)
	firstSeen := make(map[string]int)
	var errs []error
	for i, part := range strings.Split(s, ",") {
		pos := i + 1
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		token, tenant, err := parseTokenEntry(part)
		if err != nil {
			errs = append(errs, fmt.Errorf("api_tokens entry %d: %w", pos, err))
			continue
		}
		if first, dup := firstSeen[token]; dup {
			errs = append(errs, fmt.Errorf("api_tokens entry %d: duplicate token (same as entry %d)", pos, first))
			continue
		}
		firstSeen[token] = pos
		tokens[token] = tenant
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return tokens, nil
}

func parseTokenEntry(entry string) (token, tenant string, err error) {
	i := strings.LastIndexByte(entry, '=')
	if i < 0 {
		return "", "", errors.New(`missing "=" (want token=tenant)`)
	}
	token, tenant = strings.TrimSpace(entry[:i]), strings.TrimSpace(entry[i+1:])
	switch {
	case token == "":
		return "", "", errors.New("empty token")
	case tenant == "":
		return "", "", errors.New("empty tenant")
	case strings.ContainsAny(token, " \t\r\n"):
		return "", "", errors.New("token contains whitespace")
	case strings.ContainsAny(tenant, " \t\r\n"):
		return "", "", errors.New("principal contains whitespace")
	}
	return token, tenant, nil
}
