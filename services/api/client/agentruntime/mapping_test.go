package agentruntime_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// TestAPartOutsideAnyReplyIsOutputOfNoReply: a browser part that belongs
// to no reply is a ResponseOutput without a response id (the contract's
// output of no reply, which still reaches the browser), not a diagnostic,
// which never does; the rules of a reply's parts allow it.
func TestAPartOutsideAnyReplyIsOutputOfNoReply(t *testing.T) {
	t.Parallel()
	const note = `{"type":"data-notice","data":{"text":"maintenance at noon"}}`
	r := &replay{chunks: []chunk{
		{"run_a:1", note},
		{"run_a:2", `{"type":"start","messageId":"run_a","messageMetadata":{"response_id":"run_a","input_ids":["in-1"],"origin":"input"}}`},
		{"run_a:3", `{"type":"finish","messageMetadata":{"response_id":"run_a","input_ids":["in-1"],"origin":"input","outcome":"completed"},"finishReason":"stop"}`},
		{"run_a:4", note},
	}}
	evs := collect(t, replayClient(t, r), nil)
	var outside []agentruntime.ResponseOutput
	for _, ev := range evs {
		switch e := ev.(type) {
		case agentruntime.RuntimeDiagnostic:
			t.Errorf("a browser part became a diagnostic: %+v", e)
		case agentruntime.ResponseOutput:
			if e.ResponseID == "" {
				outside = append(outside, e)
			}
		}
	}
	if len(outside) != 2 || string(outside[0].Frame) != note || string(outside[1].Frame) != note {
		t.Errorf("outputs of no reply %+v, want the two notices", outside)
	}
	if err := contracttests.CheckEvents(evs); err != nil {
		t.Error(err)
	}
}
