package main

import (
	"fmt"
	"os"
	"time"

	"github.com/xbot-runtime/xbot/infra/progress"
	"github.com/xbot-runtime/xbot/projections/runner"
)

// progressPrinter shows a rebuild's progress (infra/progress).
type progressPrinter struct {
	p    *progress.Printer
	what string
}

func newProgressPrinter(f *os.File, what string) *progressPrinter {
	return &progressPrinter{p: progress.NewPrinter(f), what: what}
}

func (p *progressPrinter) report(pr runner.Progress) {
	p.p.Print(progressLine(p.what, pr), pr.Finished)
}

// progressLine renders e.g.
// "postgres [#########...........] 45% 12,345/27,000 events 8,120 events/s ETA 2s".
func progressLine(what string, pr runner.Progress) string {
	frac := 1.0
	if pr.Total > 0 {
		frac = min(1, float64(pr.Done)/float64(pr.Total))
	}
	eta := "ETA " + pr.ETA().Round(time.Second).String()
	if pr.Finished {
		eta = "done in " + pr.Elapsed.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%s [%s] %3.0f%% %s/%s events %s events/s %s", what, progress.Bar(frac), frac*100,
		progress.Thousands(pr.Done), progress.Thousands(pr.Total), progress.Thousands(int64(pr.Rate())), eta)
}
