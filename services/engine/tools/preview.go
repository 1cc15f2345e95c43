package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// preview cuts s, longer than limit bytes, to at most limit bytes: up to
// each bytes of its head, a line saying how many bytes were omitted, up to
// each bytes of its tail, then note (may be ""). Head and tail end at a
// character boundary, and at a line boundary when one is near. When limit
// leaves no room beside the marker and note, the result is note (or s) cut
// to limit.
func preview(s string, limit, each int, note string) string {
	if len(s) <= limit {
		return s
	}
	if note != "" {
		note = "\n" + note
	}
	// A marker, with both of its newlines, for the largest count it may show.
	room := limit - len(note) - len(omitted(len(s))) - 2
	if room < 2 {
		if note != "" {
			return cutString(note[1:], limit)
		}
		return cutString(s, limit)
	}
	each = min(each, room/2)
	head, tail := headOf(s, each), tailOf(s, each)
	var b strings.Builder
	b.WriteString(head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(omitted(len(s)-len(head)-len(tail)) + "\n")
	b.WriteString(tail)
	if strings.HasSuffix(tail, "\n") && note != "" {
		note = note[1:]
	}
	b.WriteString(note)
	return b.String()
}

// omitted is the marker line standing for n dropped bytes, as capture writes it.
func omitted(n int) string {
	return fmt.Sprintf("[... %d bytes omitted ...]", n)
}

// headOf is at most n bytes of the start of s, ending at a character
// boundary, and after a newline when one is in its second half.
func headOf(s string, n int) string {
	h := cutString(s, n)
	if i := strings.LastIndexByte(h, '\n'); i >= len(h)/2 {
		return h[:i+1]
	}
	return h
}

// tailOf is at most n bytes of the end of s, starting at a character
// boundary, and after a newline when one is in its first half.
func tailOf(s string, n int) string {
	t := s[len(s)-min(n, len(s)):]
	for i := 0; i < utf8.UTFMax-1 && t != "" && !utf8.RuneStart(t[0]); i++ {
		t = t[1:]
	}
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/2 {
		return t[i+1:]
	}
	return t
}

// cutString is at most n bytes of the start of s, ending at a character
// boundary.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	h := s[:n]
	return h[:len(h)-incompleteSuffix([]byte(h))]
}
