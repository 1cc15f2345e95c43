package metrics_test

import (
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

// The observe calls sit on the hot paths: each costs a label lookup and an
// atomic update or two.
func BenchmarkObserveTransaction(b *testing.B) {
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		metrics.ObserveTransaction(int32(i%12), 4, start)
	}
}

func BenchmarkObserveRequest(b *testing.B) {
	start := time.Now()
	for b.Loop() {
		metrics.ObserveRequest("POST /v1/runs", 202, start)
	}
}

func BenchmarkGather(b *testing.B) {
	for b.Loop() {
		if _, err := metrics.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGatherLag(b *testing.B) {
	for p := range int32(12) {
		metrics.SetProjectorLag("postgres", p, 0)
	}
	for b.Loop() {
		if _, err := metrics.GatherLag(); err != nil {
			b.Fatal(err)
		}
	}
}
