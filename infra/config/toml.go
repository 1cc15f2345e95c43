package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// readTOML loads config.toml: registered snake_case keys at the top level,
// values may be strings, numbers, booleans or arrays of those (joined with
// commas). A missing file yields no values and no error; unknown keys are an
// error listing each with its line.
func readTOML(path string, sc *scopes) (map[string]entry, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	src := string(data)
	var doc map[string]any
	if _, err := toml.Decode(src, &doc); err != nil {
		return nil, syntaxError(path, src, err)
	}
	providers, hasProviders := doc["providers"]
	delete(doc, "providers")
	if err := checkUnknown(path, src, doc); err != nil {
		return nil, err
	}
	out := make(map[string]entry, len(doc))
	if hasProviders {
		scoped, err := sc.tomlProviders(path, src, providers)
		if err != nil {
			return nil, err
		}
		for name, e := range scoped {
			out[name] = e
		}
	}
	for name, raw := range doc {
		line := keyLine(src, name)
		v, err := stringify(raw)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: key %s: %w", path, line, name, err)
		}
		out[name] = entry{value: v, origin: fmt.Sprintf("%s:%d", path, line)}
	}
	return out, nil
}

// syntaxError names file:line of a TOML syntax error. The parser's message
// may quote a fragment of the input, so it is left out when the line assigns
// a secret key.
func syntaxError(path, src string, err error) error {
	var perr toml.ParseError
	if !errors.As(err, &perr) {
		return fmt.Errorf("%s: %w", path, err)
	}
	line := perr.Position.Line
	if k, ok := byName[perr.LastKey]; (ok && k.Secret) || secretOnLine(src, line) {
		return fmt.Errorf("%s:%d: syntax error in the value of a secret key (not shown)", path, line)
	}
	return fmt.Errorf("%s:%d: %s", path, line, perr.Message)
}

// secretOnLine reports whether the 1-based line of src starts with the name
// of a secret key.
func secretOnLine(src string, line int) bool {
	lines := strings.Split(src, "\n")
	if line < 1 || line > len(lines) {
		return false
	}
	text := strings.TrimSpace(lines[line-1])
	for _, k := range registry {
		if k.Secret && strings.HasPrefix(text, k.Name) {
			return true
		}
	}
	return false
}

// checkUnknown reports every top-level key that is not registered.
func checkUnknown(path, src string, doc map[string]any) error {
	var unknown []string
	for name := range doc {
		if _, ok := byName[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	for i, name := range unknown {
		unknown[i] = fmt.Sprintf("%s (line %d)", name, keyLine(src, name))
	}
	return fmt.Errorf("%s: unknown keys: %s", path, strings.Join(unknown, ", "))
}

// stringify turns a decoded TOML value into the string form every layer uses.
func stringify(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	case time.Time:
		return v.Format(time.RFC3339Nano), nil
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			s, err := stringify(e)
			if err != nil {
				return "", err
			}
			if _, nested := e.([]any); nested {
				return "", errors.New("nested arrays are not supported")
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("unsupported value type %T (want string, number, bool or array)", v)
}

// keyLine returns the 1-based line where a top-level key is assigned or
// opens a table, or 0 when it cannot be found (e.g. a quoted key). The TOML
// decoder does not report key positions, so this scans the source; top-level
// assignments only count before the first table header.
func keyLine(src, name string) int {
	inTable := false
	for i, line := range strings.Split(src, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			inTable = true
			header, _, _ := strings.Cut(strings.TrimLeft(line, "["), "]")
			header = strings.TrimSpace(header)
			if header == name || strings.HasPrefix(header, name+".") {
				return i + 1
			}
			continue
		}
		if rest, ok := strings.CutPrefix(line, name); ok && !inTable {
			rest = strings.TrimSpace(rest)
			if strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, ".") {
				return i + 1
			}
		}
	}
	return 0
}
