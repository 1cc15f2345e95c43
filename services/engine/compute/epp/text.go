package epp

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// ansi matches terminal escape sequences (CSI and OSC).
var ansi = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?)`)

// redactor cleans text a plugin wrote (messages, stderr) before the host
// shows it anywhere: escape sequences and control characters (but newlines
// and tabs) are removed and every secret value the host sent in initialize
// is replaced by redacted, wherever it appears.
type redactor struct {
	secrets []string // longest first, so that one never leaves part of another
}

// redacted replaces a secret in a plugin's text.
const redacted = "***"

func newRedactor(secrets []string) *redactor {
	var s []string
	for _, v := range secrets {
		if v != "" {
			s = append(s, v)
		}
	}
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	return &redactor{secrets: s}
}

// clean returns s sanitized and redacted.
func (r *redactor) clean(s string) string {
	s = ansi.ReplaceAllString(s, "")
	s = strings.Map(func(c rune) rune {
		if c == '\n' || c == '\t' || !unicode.IsControl(c) {
			return c
		}
		return -1
	}, s)
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return s
}

// ring keeps the last size bytes written to it.
type ring struct {
	mu   sync.Mutex
	size int
	buf  []byte
}

// stderrBytes is how much of a plugin's stderr the host keeps (the end).
const stderrBytes = 64 << 10

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(p) >= r.size {
		p = p[len(p)-r.size:]
		r.buf = r.buf[:0]
	}
	if over := len(r.buf) + len(p) - r.size; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
	return n, nil
}

// String returns what is kept.
func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.buf)
}

// tail is the last n bytes of s, from the start of a line where possible,
// without the final newlines.
func tail(s string, n int) string {
	if len(s) > n {
		s = s[len(s)-n:]
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return strings.TrimRight(s, "\n")
}
