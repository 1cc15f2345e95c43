package kafkatest

import (
	"encoding/json"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
)

// MidStream reports whether a transaction's records (as kafka.Hooks'
// BeforeCommit sees them) stream an item whose start committed in an
// earlier transaction and whose end is not in this one: killing the writer
// there leaves the log with a started item that never ended, the state a
// crash mid-stream leaves, whatever the broker's speed made of the grouping
// of appends into transactions. Records of other topics are ignored.
func MidStream(recs []kafka.OutRecord) bool {
	type head struct {
		Type   events.Type `json:"type"`
		ItemID string      `json:"itemId"`
	}
	streamed, bounded := map[string]bool{}, map[string]bool{}
	for _, r := range recs {
		if r.Topic != "" {
			continue
		}
		var h head
		if json.Unmarshal(r.Value, &h) != nil || h.ItemID == "" {
			continue
		}
		switch h.Type {
		case events.ItemDelta:
			streamed[h.ItemID] = true
		case events.ItemStarted, events.ItemCompleted, events.ItemFailed:
			bounded[h.ItemID] = true
		default: // not an item's stream or bound
		}
	}
	for id := range streamed {
		if !bounded[id] {
			return true
		}
	}
	return false
}
