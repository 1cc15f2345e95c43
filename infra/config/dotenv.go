package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// readDotenv loads the XBOT_* variables of a dotenv file, by key name.
// A missing file yields no values and no error. Variables without the XBOT_
// prefix are ignored; an XBOT_ variable that names no key is an error, so a
// typo cannot silently fall back to a default.
func readDotenv(path string, sc *scopes) (map[string]entry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	vars, err := parseDotenv(path, data)
	if err != nil {
		return nil, err
	}
	out := make(map[string]entry, len(vars))
	for _, v := range vars {
		if !strings.HasPrefix(v.name, envPrefix) {
			continue
		}
		k, ok := byEnv[v.name]
		if !ok {
			k, ok = sc.byEnv[v.name]
		}
		if !ok {
			return nil, fmt.Errorf("%s:%d: unknown variable %s (no such xbot setting, nor a setting of an installed provider)", path, v.line, v.name)
		}
		out[k.Name] = entry{value: v.value, origin: fmt.Sprintf("%s:%d", path, v.line)}
	}
	return out, nil
}

// dotenvVar is one assignment in a dotenv file.
type dotenvVar struct {
	name, value string
	line        int
}

// errUnterminated marks a quoted value whose closing quote is not on this
// line; parseDotenv then continues the value on the next line.
var errUnterminated = errors.New("unterminated quote (no closing quote before the end of the file)")

// parseDotenv parses KEY=value lines: blank lines and # comments are skipped,
// an "export " prefix is allowed, values may be single quoted (literal),
// double quoted (with \" \\ \n \t escapes) or bare (trimmed, a " #" starts a
// comment). Quoted values may span lines. Errors name file:line but never
// quote the line, which may hold a secret.
func parseDotenv(path string, data []byte) ([]dotenvVar, error) {
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var vars []dotenvVar
	for i := 0; i < len(lines); i++ {
		start, line := i+1, strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, err := parseDotenvLine(line)
		for errors.Is(err, errUnterminated) && i+1 < len(lines) {
			i++
			line += "\n" + lines[i]
			name, value, err = parseDotenvLine(line)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, start, err)
		}
		vars = append(vars, dotenvVar{name: name, value: value, line: start})
	}
	return vars, nil
}

func parseDotenvLine(line string) (name, value string, err error) {
	if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
		line = strings.TrimSpace(rest)
	}
	name, raw, ok := strings.Cut(line, "=")
	if !ok {
		return "", "", errors.New("malformed line: want KEY=value")
	}
	name = strings.TrimSpace(name)
	if !validEnvName(name) {
		return "", "", errors.New("malformed line: variable name must be letters, digits and _")
	}
	value, err = parseDotenvValue(strings.TrimSpace(raw))
	if err != nil {
		return "", "", fmt.Errorf("malformed value of %s: %w", name, err)
	}
	return name, value, nil
}

func parseDotenvValue(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	switch raw[0] {
	case '\'':
		end := strings.IndexByte(raw[1:], '\'')
		if end < 0 {
			return "", errUnterminated
		}
		return raw[1 : end+1], checkTrailing(raw[end+2:])
	case '"':
		return parseDoubleQuoted(raw)
	}
	if i := strings.Index(raw, " #"); i >= 0 {
		raw = raw[:i]
	}
	if i := strings.Index(raw, "\t#"); i >= 0 {
		raw = raw[:i]
	}
	return strings.TrimSpace(raw), nil
}

// parseDoubleQuoted decodes a "…" value starting at raw[0].
func parseDoubleQuoted(raw string) (string, error) {
	var b strings.Builder
	for i := 1; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '"':
			return b.String(), checkTrailing(raw[i+1:])
		case c == '\\' && i+1 < len(raw):
			i++
			b.WriteString(unescape(raw[i]))
		default:
			b.WriteByte(c)
		}
	}
	return "", errUnterminated
}

func unescape(c byte) string {
	switch c {
	case 'n':
		return "\n"
	case 't':
		return "\t"
	case 'r':
		return "\r"
	case '"', '\\', '$', '`':
		return string(c)
	}
	return `\` + string(c)
}

// checkTrailing accepts only whitespace or a comment after a closing quote.
func checkTrailing(rest string) error {
	rest = strings.TrimSpace(rest)
	if rest == "" || strings.HasPrefix(rest, "#") {
		return nil
	}
	return errors.New("unexpected text after closing quote")
}

func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		letter := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
