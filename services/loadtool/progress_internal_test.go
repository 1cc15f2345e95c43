package loadtool

import (
	"testing"
	"time"
)

func TestProgressLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		done, failed, total int64
		elapsed             time.Duration
		finished            bool
		want                string
	}{
		{"running", 225, 0, 500, 6 * time.Second, false,
			"bench [##########..............]  45% 225/500 runs 37.5 runs/s ETA 7s"},
		{"with failures", 225, 3, 500, 6 * time.Second, false,
			"bench [##########..............]  45% 225/500 runs (3 failed) 37.5 runs/s ETA 7s"},
		{"nothing done yet", 0, 0, 1500, 0, false,
			"bench [........................]   0% 0/1,500 runs 0.0 runs/s ETA ?"},
		{"finished", 500, 0, 500, 6500 * time.Millisecond, true,
			"bench [########################] 100% 500/500 runs 76.9 runs/s done in 6.5s"},
	}
	for _, tc := range tests {
		if got := progressLine(tc.done, tc.failed, tc.total, tc.elapsed, tc.finished); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
