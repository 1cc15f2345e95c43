package agentloop

import (
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// TestThresholdCompactionNeedsSomethingNew: a context over the threshold on
// what a compaction keeps (the input, the summary) is not compacted again
// until the run adds an item.
func TestThresholdCompactionNeedsSomethingNew(t *testing.T) {
	t.Parallel()
	const run = "run_01J8XK8A1B2C3D4E5F6G7H8J9K"
	b := newLog(t, run, "a very long input", "")
	if !grewSinceCompaction(b.Events()) {
		t.Fatal("a run never compacted must be allowed to compact")
	}
	b.response("itm_01J8XK8A1B2C3D4E5F6G7H8J91", "first", 0)
	b.Compacted(events.ContextCompactedPayload{ArtifactID: "cmp_01J8XK8A1B2C3D4E5F6G7H8J9K", TriggerReason: events.CompactBeforeModelRequest})
	if grewSinceCompaction(b.Events()) {
		t.Fatal("nothing happened since the compaction, yet another one is allowed")
	}
	b.response("itm_01J8XK8A1B2C3D4E5F6G7H8J92", "second", 1)
	if !grewSinceCompaction(b.Events()) {
		t.Fatal("a new response after the compaction must allow the next one")
	}
}
