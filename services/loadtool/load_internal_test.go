package loadtool

import (
	"encoding/json"
	"testing"

	"github.com/xbot-runtime/xbot/projections/uistream"
)

// TestFinishOutcome: a client reads how its run ended from the finish chunk
// the stream sends (as uistream encodes it), and from no other chunk.
func TestFinishOutcome(t *testing.T) {
	t.Parallel()
	data := func(c uistream.Chunk) string {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"completed", data(uistream.Chunk{Type: "finish", FinishReason: "stop",
			MessageMetadata: &uistream.Metadata{ResponseID: "r", Outcome: "completed"}}), "completed"},
		{"failed", data(uistream.Chunk{Type: "finish", FinishReason: "error",
			MessageMetadata: &uistream.Metadata{ResponseID: "r", Outcome: "failed"}}), "failed"},
		{"paused", data(uistream.Chunk{Type: "finish", FinishReason: "tool-calls",
			MessageMetadata: &uistream.Metadata{ResponseID: "r"}}), ""},
		{"a delta that says finish", data(uistream.Chunk{Type: "text-delta", ID: "t", Delta: `"finish"`}), ""},
		{"not JSON", `"finish"`, ""},
	} {
		if got := finishOutcome(tc.data); got != tc.want {
			t.Errorf("%s: finishOutcome(%s) = %q, want %q", tc.name, tc.data, got, tc.want)
		}
	}
}
