package progress_test

import (
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/progress"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -5: "-5"} {
		if got := progress.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBar(t *testing.T) {
	for frac, want := range map[float64]int{0: 0, 0.5: 12, 1: 24, 2: 24, -1: 0} {
		bar := progress.Bar(frac)
		if len(bar) != 24 || strings.Count(bar, "#") != want {
			t.Errorf("Bar(%v) = %q, want 24 characters, %d filled", frac, bar, want)
		}
	}
}

func TestPlainPrinterWritesAtMostEveryIntervalAndAlwaysTheLast(t *testing.T) {
	var b strings.Builder
	p := progress.NewPlain(&b, time.Hour)
	p.Print("one", false)
	p.Print("two", false) // within the hour: dropped
	p.Print("last", true)
	if got := b.String(); got != "one\nlast\n" {
		t.Errorf("printed %q, want the first and the last line", got)
	}
}
