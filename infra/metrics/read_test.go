package metrics_test

import (
	"math"
	"testing"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

func TestHistogramQuantileInterpolatesWithinItsBucket(t *testing.T) {
	t.Parallel()
	before := metrics.Histogram{Count: 2, Sum: 1, Buckets: []metrics.Bucket{{1, 2}, {2, 2}, {4, 2}}}
	after := metrics.Histogram{Count: 12, Sum: 26, Buckets: []metrics.Bucket{{1, 2}, {2, 7}, {4, 12}}}
	h := after.Minus(before)
	if h.Count != 10 || h.Mean() != 2.5 {
		t.Fatalf("minus: %+v, mean %g", h, h.Mean())
	}
	// Five samples in (1, 2], five in (2, 4]: the median is at 2, the 90th
	// percentile four fifths into (2, 4].
	for q, want := range map[float64]float64{0.5: 2, 0.9: 3.6, 0.1: 1.2} {
		if got := h.Quantile(q); math.Abs(got-want) > 1e-9 {
			t.Errorf("q%g = %g, want %g", q, got, want)
		}
	}
	if !math.IsNaN((metrics.Histogram{}).Quantile(0.5)) {
		t.Error("an empty histogram has no quantile")
	}
}
