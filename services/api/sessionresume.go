package api

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// resumeSession sends message d of a session whose latest run ended longer
// ago than half of Config.RememberFinished as a CreateRun of the session's
// next run, a child of that run, instead of a message naming it: the
// executor may have forgotten the run, and would take it for one that never
// existed. The run's agent, sandbox key and the session's grants come from
// the read model, the grants as a create's (inheritGrants); its
// engine finds the history on the parent's partition. The run id is derived
// from the key (commands.RunIDFor), so a retry is a duplicate, answered as a
// create's is when its run ended long ago too.
func (a *API) resumeSession(ctx context.Context, d draft, actorHeader string, wait time.Duration) (*sessionCommandOutput, error) {
	parent, err := a.findRun(ctx, d.runID)
	if err != nil {
		return nil, err
	}
	var sk events.SandboxKey
	if err := json.Unmarshal(parent.SandboxKey, &sk); err != nil {
		return nil, fmt.Errorf("run %s: sandbox key: %w", parent.RunID, err)
	}
	msg, _ := d.payload.(commands.AppendUserInputPayload)
	p := commands.CreateRunPayload{AgentID: parent.AgentID, Input: events.UserInput{Content: msg.Content},
		SandboxKey: sk, ParentRunID: parent.RunID, Options: msg.Options}
	d.runID = commands.RunIDFor(tenantOf(ctx), d.key, sk, a.partitions(ctx))
	d.typ, d.payload = commands.CreateRun, p
	env, err := d.envelope(ctx, actorHeader)
	if err != nil {
		return nil, err
	}
	if err := checkRunOwner(principalOf(ctx), parent); err != nil {
		return nil, err
	}
	if err := a.claimKey(ctx, env); err != nil {
		return nil, err
	}
	if out, err := a.answerLongEnded(ctx, env); out != nil || err != nil {
		if err != nil {
			return nil, err
		}
		r := out.Body
		return &sessionCommandOutput{Body: sessionCommandResult{Intent: commands.IntentFollowUp, RunID: r.RunID,
			CommandID: r.CommandID, Outcome: r.Outcome, Code: r.Code, Detail: r.Detail}}, nil
	}
	env, hold, err := a.inheritGrants(ctx, d.sessionID, env, p)
	if err != nil {
		return nil, err
	}
	defer a.release(ctx, hold, false)
	return a.sendSessionCommand(ctx, env, a.flights.start(env), wait, hold)
}
