package executor_test

import (
	"context"
	"time"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/events"
)

func readRun(h *harness, runID string) ([]events.Envelope, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	all, err := contracttests.KafkaSource(h.kcfg)(ctx)
	if err != nil {
		return nil, err
	}
	var out []events.Envelope
	for _, e := range all {
		if e.RunID == runID {
			out = append(out, e)
		}
	}
	return out, nil
}

func count(h *harness, runID string, t events.Type) int {
	evs, err := readRun(h, runID)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == t {
			n++
		}
	}
	return n
}

// readAll returns every event of the events topic, each partition in log order.
func readAll(h *harness) ([]events.Envelope, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return contracttests.KafkaSource(h.kcfg)(ctx)
}
