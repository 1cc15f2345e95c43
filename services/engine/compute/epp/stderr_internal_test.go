package epp

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

// capture runs captureStderr over data and returns the lines it handed on.
func capture(t testing.TB, data []byte) []string {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{errOut: r, stderr: &ring{size: stderrBytes}, stderrDone: make(chan struct{})}
	go func() {
		_, _ = w.Write(data)
		_ = w.Close()
	}()
	var lines []string
	p.captureStderr(func(l string) { lines = append(lines, l) })
	_ = r.Close()
	return lines
}

// TestStderrLines: stderr is handed on line by line, a line that never
// ends in pieces of 4 KiB; an unfinished last line is not.
func TestStderrLines(t *testing.T) {
	long := strings.Repeat("x", stderrPiece)
	got := capture(t, []byte("one\n\ntwo\n"+long+long+"y\nrest"))
	want := []string{"one", "", "two", long, long, "y"}
	if !slices.Equal(got, want) {
		t.Errorf("lines %q, want %q", got, want)
	}
}

// TestStderrSplitIsLinear: splitting stderr into lines copies nothing per
// line of what is still buffered (it did: a plugin writing newlines made
// the host spend seconds of CPU per MiB of them).
func TestStderrSplitIsLinear(t *testing.T) {
	data := bytes.Repeat([]byte{'\n'}, 64<<10)
	if allocs := testing.AllocsPerRun(1, func() { capture(t, data) }); allocs > 1000 {
		t.Errorf("%v allocations to split 64 KiB of newlines", allocs)
	}
}

// BenchmarkStderrNewlines is the cost of a plugin writing newlines to its
// stderr.
func BenchmarkStderrNewlines(b *testing.B) {
	data := bytes.Repeat([]byte{'\n'}, 1<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		capture(b, data)
	}
}
