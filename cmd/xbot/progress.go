package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/xbot-runtime/xbot/projections/runner"
)

// progressPrinter shows a rebuild's progress: a redrawn bar on a terminal,
// a plain line every few seconds otherwise (logs, CI).
type progressPrinter struct {
	w     io.Writer
	tty   bool
	what  string
	every time.Duration
	last  time.Time
}

func newProgressPrinter(f *os.File, what string) *progressPrinter {
	return &progressPrinter{w: f, tty: term.IsTerminal(int(f.Fd())), what: what, every: 2 * time.Second}
}

func (p *progressPrinter) report(pr runner.Progress) {
	line := progressLine(p.what, pr)
	switch {
	case p.tty:
		_, _ = fmt.Fprintf(p.w, "\r\033[K%s", line)
		if pr.Finished {
			_, _ = fmt.Fprintln(p.w)
		}
	case pr.Finished || time.Since(p.last) >= p.every:
		_, _ = fmt.Fprintln(p.w, line)
		p.last = time.Now()
	}
}

// progressLine renders e.g.
// "postgres [#########...........] 45% 12,345/27,000 events 8,120 events/s ETA 2s".
func progressLine(what string, pr runner.Progress) string {
	const width = 24
	frac := 1.0
	if pr.Total > 0 {
		frac = min(1, float64(pr.Done)/float64(pr.Total))
	}
	filled := int(frac * width)
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	eta := "ETA " + pr.ETA().Round(time.Second).String()
	if pr.Finished {
		eta = "done in " + pr.Elapsed.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%s [%s] %3.0f%% %s/%s events %s events/s %s", what, bar, frac*100,
		thousands(pr.Done), thousands(pr.Total), thousands(int64(pr.Rate())), eta)
}

func thousands(n int64) string {
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
