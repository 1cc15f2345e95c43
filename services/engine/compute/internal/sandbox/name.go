package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// maxComponent is NAME_MAX on Linux file systems: a longer escaped ID could
// not be created as a directory.
const maxComponent = 255

// escape returns name as one path component: every byte outside
// [A-Za-z0-9_.-], a leading dot and '%' itself are written as %XX. The result
// never contains a slash, is never "." or "..", and distinct names stay
// distinct.
func escape(name string) (string, error) {
	if name == "" {
		return "", errors.New("empty")
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if safeByte(c) && (i > 0 || c != '.') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	if b.Len() > maxComponent {
		return "", fmt.Errorf("longer than %d bytes once escaped", maxComponent)
	}
	return b.String(), nil
}

func safeByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '_', c == '-', c == '.':
		return true
	default:
		return false
	}
}

// escapeAll escapes named IDs and joins every problem.
func escapeAll(ids [][2]string) ([]string, error) {
	out := make([]string, 0, len(ids))
	var errs []error
	for _, id := range ids {
		e, err := escape(id[1])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id[0], err))
		}
		out = append(out, e)
	}
	return out, errors.Join(errs...)
}
