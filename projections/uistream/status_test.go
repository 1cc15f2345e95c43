package uistream_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// statusParts returns the data-status parts of a rendered run stream.
func statusParts(t *testing.T, sse []byte) []uistream.Status {
	t.Helper()
	var out []uistream.Status
	for _, l := range strings.Split(string(sse), "\n") {
		data, ok := strings.CutPrefix(l, "data: ")
		if !ok || !strings.Contains(data, `"type":"data-status"`) {
			continue
		}
		var c struct {
			Data      uistream.Status `json:"data"`
			Transient bool            `json:"transient"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil || !c.Transient {
			t.Fatalf("status chunk %s: transient %v, %v", data, c.Transient, err)
		}
		out = append(out, c.Data)
	}
	return out
}

// TestStatusPartsFollowTheRunState checks every golden log: the stream's
// data-status parts are exactly the changes of the status the run's state
// shows after each lifecycle event, so the last one is idle once the run
// ended, and a stream resumed after any event sends the same later parts.
func TestStatusPartsFollowTheRunState(t *testing.T) {
	t.Parallel()
	for _, name := range slices.Sorted(maps.Keys(goldenCases)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			evs := goldenCases[name](t)
			var want []uistream.Status
			var st events.RunState
			for _, e := range evs {
				var err error
				if st, err = events.Fold(st, e); err != nil {
					t.Fatal(err)
				}
				s, ok := uistream.StatusOf(runA, st.Status, st.PauseReason)
				if ok && (len(want) == 0 || want[len(want)-1] != s) {
					want = append(want, s)
				}
				if st.Status.Terminal() {
					break
				}
			}
			var whole bytes.Buffer
			if err := uistream.WriteRun(&whole, evs, uistream.Position{}); err != nil {
				t.Fatal(err)
			}
			got := statusParts(t, whole.Bytes())
			if !slices.Equal(got, want) {
				t.Fatalf("status parts %+v, want %+v", got, want)
			}
			if st.Status.Terminal() && got[len(got)-1].Status != uistream.StatusIdle {
				t.Fatalf("the run ended, its last status is %+v", got[len(got)-1])
			}
			for i := range evs {
				var rest bytes.Buffer
				if err := uistream.WriteRun(&rest, evs, uistream.After(evs[i].Seq)); err != nil {
					t.Fatal(err)
				}
				if !bytes.HasSuffix(whole.Bytes(), rest.Bytes()) {
					t.Fatalf("resumed after seq %d: not the whole stream's tail", evs[i].Seq)
				}
			}
		})
	}
}
