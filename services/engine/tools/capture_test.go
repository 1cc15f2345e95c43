package tools

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		limit  int
		writes []string
		want   string
		cut    bool
	}{
		{"fits", 10, []string{"hello", "world"}, "helloworld", false},
		{"one big write", 10, []string{"abcdefghijklmnopqrstuvwxyz"}, "abcde\n[... 16 bytes omitted ...]\nvwxyz", true},
		{"many small writes", 4, []string{"a", "b", "c", "d", "e", "f"}, "ab\n[... 2 bytes omitted ...]\nef", true},
		{"tail rolls", 6, []string{"abc", "defg", "hij", "klm"}, "abc\n[... 7 bytes omitted ...]\nklm", true},
		{"zero limit", 0, []string{"abc"}, "\n[... 3 bytes omitted ...]\n", true},
		// "é" is 2 bytes: the head must not end, nor the tail start, inside one.
		{"runes kept whole", 6, []string{"ééééééééé"}, "é\n[... 14 bytes omitted ...]\né", true},
		{"invalid UTF-8 replaced", 10, []string{"a\xffb"}, "a\uFFFDb", false},
	}
	for _, tc := range cases {
		c := newCapture(tc.limit)
		for _, w := range tc.writes {
			c.write([]byte(w))
		}
		got, cut := c.text()
		if got != tc.want || cut != tc.cut {
			t.Errorf("%s: text() = %q, %v; want %q, %v", tc.name, got, cut, tc.want, tc.cut)
		}
	}
}

func TestStreamForwardsWholeCharacters(t *testing.T) {
	t.Parallel()
	var chunks []string
	s := &stream{mu: &sync.Mutex{}, name: "stdout", cap: newCapture(1 << 10),
		out: func(name, chunk string) {
			if name != "stdout" {
				t.Errorf("stream name %q", name)
			}
			chunks = append(chunks, chunk)
		}}
	text := "a日本🙂z"
	for i := range len(text) { // one byte per write: every rune is split
		if _, err := s.Write([]byte{text[i]}); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	s.close()
	s.mu.Unlock()
	if strings.Join(chunks, "") != text {
		t.Fatalf("chunks %q do not add up to %q", chunks, text)
	}
	for _, c := range chunks {
		if !utf8.ValidString(c) {
			t.Errorf("chunk %q is not whole characters", c)
		}
	}
	if want := []string{"a", "日", "本", "🙂", "z"}; strings.Join(chunks, "|") != strings.Join(want, "|") {
		t.Errorf("chunks = %q, want %q", chunks, want)
	}
	if _, err := s.Write([]byte("late")); err != nil || len(chunks) != 5 {
		t.Errorf("a write after close was forwarded: %q", chunks)
	}
}

func TestStreamFlushesAnIncompleteTail(t *testing.T) {
	t.Parallel()
	var got string
	s := &stream{mu: &sync.Mutex{}, name: "stderr", cap: newCapture(64), out: func(_, c string) { got += c }}
	_, _ = s.Write([]byte("ok \xe6\x97")) // a cut-off "日"
	if got != "ok " {
		t.Errorf("before close: %q", got)
	}
	s.mu.Lock()
	s.close()
	s.mu.Unlock()
	if got != "ok \xe6\x97" {
		t.Errorf("after close: %q", got)
	}
}
