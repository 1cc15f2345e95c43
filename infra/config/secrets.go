package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ParseSecrets parses an mcp_secrets value, "NAME=value,NAME2=value2", into
// values by name. Names are variable-like ([A-Za-z_][A-Za-z0-9_]*); the first
// "=" separates name and value. Errors name entries by position and never
// quote a value.
func ParseSecrets(s string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("mcp_secrets entry %d: missing \"=\" (want NAME=value)", i+1))
		case !validSecretName(name):
			errs = append(errs, fmt.Errorf("mcp_secrets entry %d: the name is not [A-Za-z_][A-Za-z0-9_]*", i+1))
		case value == "":
			errs = append(errs, fmt.Errorf("mcp_secrets entry %d (%s): empty value", i+1, name))
		default:
			if _, dup := out[name]; dup {
				errs = append(errs, fmt.Errorf("mcp_secrets entry %d: %s is given twice", i+1, name))
			}
			out[name] = value
		}
	}
	return out, errors.Join(errs...)
}

// ReadSecretsFile reads NAME=value lines (dotenv syntax: comments, quotes,
// "export ") from path. Errors name the file and line, never a value.
func ReadSecretsFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- the operator's secrets file
	if err != nil {
		return nil, fmt.Errorf("mcp_secrets_file: %w", err)
	}
	vars, err := parseDotenv(path, data)
	if err != nil {
		return nil, fmt.Errorf("mcp_secrets_file: %w", err)
	}
	out := make(map[string]string, len(vars))
	for _, v := range vars {
		out[v.name] = v.value
	}
	return out, nil
}

func validSecretName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
