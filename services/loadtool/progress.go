package loadtool

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// progress shows a load's progress: a redrawn bar on a terminal, a plain
// line every few seconds otherwise (logs, CI).
type progress struct {
	w     io.Writer
	tty   bool
	total int
	every time.Duration
	last  time.Time
}

func newProgress(f *os.File, total int) *progress {
	return &progress{w: f, tty: term.IsTerminal(int(f.Fd())), total: total, every: 2 * time.Second}
}

func (p *progress) report(done, failed int64, elapsed time.Duration, finished bool) {
	line := progressLine(done, failed, int64(p.total), elapsed, finished)
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

// progressLine renders e.g.
// "bench [#########...........] 45% 225/500 runs 37 runs/s ETA 7s".
func progressLine(done, failed, total int64, elapsed time.Duration, finished bool) string {
	const width = 24
	frac := min(1, float64(done)/float64(max(total, 1)))
	filled := int(frac * width)
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	eta := "ETA ?"
	if rate > 0 {
		eta = "ETA " + time.Duration(float64(total-done)/rate*float64(time.Second)).Round(time.Second).String()
	}
	if finished {
		eta = "done in " + elapsed.Round(time.Millisecond).String()
	}
	fails := ""
	if failed > 0 {
		fails = fmt.Sprintf(" (%s failed)", thousands(failed))
	}
	return fmt.Sprintf("bench [%s] %3.0f%% %s/%s runs%s %.1f runs/s %s", bar, frac*100, thousands(done),
		thousands(total), fails, rate, eta)
}

// thousands writes n with a comma between groups of three digits.
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
