// Package progress shows the progress of long work on a terminal or in a log:
// a line redrawn in place when the output is a terminal, a plain line every
// few seconds otherwise (logs, CI), and the last line always.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// Printer writes progress lines to one output.
type Printer struct {
	w     io.Writer
	tty   bool
	every time.Duration
	last  time.Time
}

// NewPrinter returns a printer to f that redraws when f is a terminal and
// otherwise writes a line at most every 2 s.
func NewPrinter(f *os.File) *Printer {
	return &Printer{w: f, tty: term.IsTerminal(int(f.Fd())), every: 2 * time.Second}
}

// NewPlain returns a printer to w that writes a line at most every interval
// (and the final one), as to a log.
func NewPlain(w io.Writer, every time.Duration) *Printer { return &Printer{w: w, every: every} }

// Print shows line; finished marks the last line, which is always written.
func (p *Printer) Print(line string, finished bool) {
	switch {
	case p.tty:
		_, _ = fmt.Fprintf(p.w, "\r\033[K%s", line)
		if finished {
			_, _ = fmt.Fprintln(p.w)
		}
	case finished || time.Since(p.last) >= p.every:
		_, _ = fmt.Fprintln(p.w, line)
		p.last = time.Now()
	}
}

// Bar renders frac (0 to 1) as a bar of 24 characters, e.g.
// "#########...............".
func Bar(frac float64) string {
	const width = 24
	filled := int(min(1, max(0, frac)) * width)
	return strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
}

// Thousands writes n with a comma between groups of three digits.
func Thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
