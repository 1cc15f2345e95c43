package tools

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// capture keeps the head and the tail of a byte stream within a cap, and
// counts what it dropped in between.
type capture struct {
	headCap, tailCap int
	head, tail       []byte
	total            int64
}

func newCapture(limit int) *capture {
	return &capture{headCap: limit / 2, tailCap: limit - limit/2}
}

func (c *capture) write(p []byte) {
	c.total += int64(len(p))
	if n := min(len(p), c.headCap-len(c.head)); n > 0 {
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	switch {
	case len(p) == 0 || c.tailCap == 0:
	case len(p) >= c.tailCap:
		c.tail = append(c.tail[:0], p[len(p)-c.tailCap:]...)
	default:
		c.tail = append(c.tail, p...)
		if over := len(c.tail) - c.tailCap; over > 0 {
			c.tail = c.tail[over:]
		}
	}
}

// text returns the captured text as valid UTF-8 and whether bytes were
// dropped; a marker line saying how many stands where they were.
func (c *capture) text() (string, bool) {
	if c.total == int64(len(c.head)+len(c.tail)) {
		return strings.ToValidUTF8(string(c.head)+string(c.tail), "\uFFFD"), false
	}
	head := c.head[:len(c.head)-incompleteSuffix(c.head)]
	tail := c.tail
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	omitted := c.total - int64(len(head)+len(tail))
	s := fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", head, omitted, tail)
	return strings.ToValidUTF8(s, "\uFFFD"), true
}

// incompleteSuffix is the length of a UTF-8 sequence cut off at the end of b.
func incompleteSuffix(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

// stream is the io.Writer of one output stream of a command: it captures
// within the cap and forwards every byte to out, holding back a UTF-8
// sequence split between writes so each chunk is whole characters. Streams
// sharing mu never call out concurrently.
type stream struct {
	mu      *sync.Mutex
	name    string
	cap     *capture
	out     func(stream, chunk string)
	pending []byte
	closed  bool
}

func (s *stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return len(p), nil
	}
	s.cap.write(p)
	if s.out == nil {
		return len(p), nil
	}
	buf := append(s.pending, p...)
	cut := len(buf) - incompleteSuffix(buf)
	s.pending = append([]byte(nil), buf[cut:]...)
	if cut > 0 {
		s.out(s.name, string(buf[:cut]))
	}
	return len(p), nil
}

// close flushes held-back bytes and ignores later writes (a process killed on
// cancellation may leave a writer behind). The caller holds mu.
func (s *stream) close() {
	if s.out != nil && len(s.pending) > 0 {
		s.out(s.name, string(s.pending))
	}
	s.pending, s.closed = nil, true
}
