package executor

import (
	"encoding/json"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// cancelAppend is the append by which pending cancel p ends the run at a
// safe point: a session's interrupt also turns the messages it keeps into
// the session's next run, produced with the events.
func (r *Run) cancelAppend(st events.RunState, p events.PendingCommand, unstarted []events.Draft) (AppendOptions, []events.Draft) {
	var c commands.CancelRunPayload
	if len(p.Command) > 0 {
		_ = json.Unmarshal(p.Command, &c) // validated at admission
	}
	if !c.Interrupt {
		return AppendOptions{}, commands.CancelEvents(st, p, unstarted)
	}
	drafts, send := commands.InterruptEvents(st, p, unstarted, r.worker.part.Partitions(), time.Now().UnixMilli())
	return AppendOptions{Send: send}, drafts
}
