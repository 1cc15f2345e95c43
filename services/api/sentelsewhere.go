package api

import (
	"context"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// FollowCommands makes GET /v1/commands/{id} answer pending, not 404, for
// a command in flight that another API instance sent: the wiring passes
// every batch of this instance's tail of the commands topic to
// ObserveCommands, and barrier, that tail, lets a read wait until the tail
// has delivered every command committed before it. Without it, only the
// commands this instance sent are known before the read model has them.
func (a *API) FollowCommands(barrier TailBarrier) {
	a.commandsBarrier.Store(&barrier)
}

// ObserveCommands remembers the commands in values, records of the commands
// topic, as sent: their outcomes come from the events topic's tail like
// those of the commands this instance sent (Observe). A record that is not
// a command envelope is ignored here; the executor dead-letters it.
func (a *API) ObserveCommands(values [][]byte) {
	for _, v := range values {
		var h commandHeader // not the payload: only the header is answered
		if err := events.Unmarshal(v, &h); err != nil || h.CommandID == "" || h.TenantID == "" {
			continue
		}
		a.elsewhere.observe(commands.Envelope{CommandID: h.CommandID, IdempotencyKey: h.IdempotencyKey, RunID: h.RunID,
			PlatformSessionID: h.PlatformSessionID, Type: h.Type, TenantID: h.TenantID})
	}
}

// commandHeader is what ObserveCommands reads of a command envelope.
type commandHeader struct {
	CommandID         string        `json:"commandId"`
	IdempotencyKey    string        `json:"idempotencyKey"`
	RunID             string        `json:"runId"`
	PlatformSessionID string        `json:"platformSessionId"`
	Type              commands.Type `json:"type"`
	TenantID          string        `json:"tenantId"`
}

// sentElsewhere returns the command commandID of tenant that the commands
// topic showed, waiting first, up to Config.StreamAppearWait, until this
// instance's tail of it has delivered every command committed before the
// call: a command sent through another instance just before is found.
func (a *API) sentElsewhere(ctx context.Context, tenant, commandID string) (*flight, bool) {
	if f, ok := a.elsewhere.get(tenant, commandID); ok {
		return f, true
	}
	p := a.commandsBarrier.Load()
	if p == nil {
		return nil, false
	}
	wctx, cancel := context.WithTimeout(ctx, a.cfg.StreamAppearWait)
	defer cancel()
	if err := (*p).Barrier(wctx); err != nil {
		return nil, false
	}
	return a.elsewhere.get(tenant, commandID)
}

// routed says whether the executor may record env's outcome on another run
// of its session than env.RunID, as it does for a session message
// (flights.startRouted); an outcome matches by command id and tenant either
// way.
func routed(env commands.Envelope) bool {
	return env.Type == commands.AppendUserInput && env.PlatformSessionID != ""
}
