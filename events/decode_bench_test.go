package events_test

import (
	"encoding/json"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/runner/runnertest"
)

// BenchmarkDecode decodes the envelopes of a run of 33 events (three tool
// turns that stream deltas, then an answer), and each payload, as every
// reader of the log does.
//
//	go test -run '^$' -bench Decode -benchmem ./events/
func BenchmarkDecode(b *testing.B) {
	var raws [][]byte
	for _, e := range runnertest.Run(b, 0) {
		raw, err := json.Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	b.Run("envelope", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, raw := range raws {
				if _, err := events.Decode(raw); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(raws)), "ns/event")
	})
	b.Run("payload", func(b *testing.B) {
		envs := make([]events.Envelope, len(raws))
		for i, raw := range raws {
			envs[i], _ = events.Decode(raw)
		}
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range envs {
				if _, err := e.DecodePayload(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(raws)), "ns/event")
	})
}
