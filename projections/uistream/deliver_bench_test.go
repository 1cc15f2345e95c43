package uistream_test

import (
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// BenchmarkDeliver is the hub's cost per record of the events topic's tail
// when 1 run in 100 is streamed, next to decoding every record (what
// Deliver did before it decoded only what a stream needs):
//
//	go test -run '^$' -bench Deliver -benchmem ./projections/uistream/
func BenchmarkDeliver(b *testing.B) {
	const runs, batch = 100, 256
	base := deltaLog(b, 64)
	values := make([][]byte, 0, batch)
	keys := make([]string, 0, batch)
	for i := range batch {
		e := base[i%len(base)]
		e.RunID = fmt.Sprintf("run_%03d", i%runs)
		values, keys = append(values, eventstest.Raw(e)), append(keys, e.RunID)
	}
	b.Run("hub", func(b *testing.B) {
		hub, err := uistream.NewHub(uistream.HubConfig{Logger: zap.NewNop()})
		if err != nil {
			b.Fatal(err)
		}
		defer hub.Close()
		sub := hub.SubscribeRun("acme", "run_000")
		defer sub.Close()
		b.ReportAllocs()
		for b.Loop() {
			recs := make([]*uistream.Record, batch)
			for i := range recs {
				recs[i] = &uistream.Record{Key: keys[i], Value: values[i]}
			}
			hub.Deliver(recs)
			for len(sub.Events()) > 0 {
				<-sub.Events()
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/record")
	})
	b.Run("decode-all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, v := range values {
				if _, err := events.Decode(v); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/record")
	})
}
