package loadtool

import (
	"fmt"
	"os"
	"time"

	"github.com/xbot-runtime/xbot/infra/progress"
)

// loadProgress shows a load's progress (infra/progress).
type loadProgress struct {
	p     *progress.Printer
	total int
}

func newProgress(f *os.File, total int) *loadProgress {
	return &loadProgress{p: progress.NewPrinter(f), total: total}
}

func (p *loadProgress) report(done, failed int64, elapsed time.Duration, finished bool) {
	p.p.Print(progressLine(done, failed, int64(p.total), elapsed, finished), finished)
}

// progressLine renders e.g.
// "bench [#########...........] 45% 225/500 runs 37 runs/s ETA 7s".
func progressLine(done, failed, total int64, elapsed time.Duration, finished bool) string {
	frac := min(1, float64(done)/float64(max(total, 1)))
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
	return fmt.Sprintf("bench [%s] %3.0f%% %s/%s runs%s %.1f runs/s %s", progress.Bar(frac), frac*100, thousands(done),
		thousands(total), fails, rate, eta)
}

var thousands = progress.Thousands
