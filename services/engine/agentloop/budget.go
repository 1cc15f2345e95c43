package agentloop

import (
	"fmt"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// overEventBudget says the run's events on the log passed its event-bytes
// budget (limits.maxEventBytes) less the room kept for ending the run: the
// next safe point fails it with budget_exhausted, and until then nothing more
// is streamed and no further tool call starts. What is already running
// finishes (its closing event is bounded by the tools' previews), so the run
// may pass the threshold by a few such events, which the reserve covers.
func (r *execution) overEventBudget() bool {
	return r.run.EventBytes() > r.limits.MaxEventBytes-profile.EventBytesReserve
}

// eventBudgetMessage is the budget_exhausted message of overEventBudget.
func (r *execution) eventBudgetMessage() string {
	return fmt.Sprintf("the run's events reached its limit of %d event bytes (limits.maxEventBytes)", r.limits.MaxEventBytes)
}

// overBudget returns the message of the first time or size budget the run
// exhausted, or "" when it is within them.
func (r *execution) overBudget() string {
	switch {
	case r.wall.Err() != nil:
		return fmt.Sprintf("the run exceeded its wall time of %s", r.limits.MaxWallTime)
	case r.overEventBudget():
		return r.eventBudgetMessage()
	default:
		return ""
	}
}
