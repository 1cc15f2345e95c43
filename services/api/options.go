package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// runOptionsBody is the options object of POST /v1/runs and of a session
// message (seed 002's agentRun names and values).
type runOptionsBody struct {
	WorkingDirectory string `json:"workingDirectory,omitempty" maxLength:"1024" doc:"Where tool calls start: a clean path relative to the workspace root that stays inside it (no leading /, no . or .. segments, no control characters). Default: the workspace root."`
	SafetyMode       string `json:"safetyMode,omitempty" enum:"read-only,workspace-write,danger-full-access" doc:"What the sandbox lets a tool call change. Default: the profile's (workspace-write unless it names another). danger-full-access needs scope unconfined."`
	ApprovalMode     string `json:"approvalMode,omitempty" enum:"ask,auto,bypass" doc:"Which tool calls wait for a person. Default: the profile's (ask unless it names another). bypass needs scope unconfined."`
	NetworkAccess    *bool  `json:"networkAccess,omitempty" doc:"Whether a tool call may use the network. Default: the profile's sandbox.network; true for an agent whose profile forbids the network is refused (403 option_not_allowed). Always true with safetyMode danger-full-access (false with it is 422)."`
}

// runOptions checks the options a caller asked for on a run of agentID
// against the agent profile and the caller's scopes, and returns them as
// the command carries them (nil when none were asked for). Malformed
// options are a validation error (422); an option the profile does not
// allow is 403 option_not_allowed, and one that needs a scope the caller
// lacks is 403 forbidden_scope. Nothing is downgraded. The executor
// checks the options against the profile again when the run starts.
func (a *API) runOptions(ctx context.Context, agentID string, body *runOptionsBody) (*events.RunOptions, error) {
	if body == nil {
		return nil, nil
	}
	o := &events.RunOptions{WorkingDirectory: body.WorkingDirectory, SafetyMode: events.SafetyMode(body.SafetyMode),
		ApprovalMode: events.ApprovalMode(body.ApprovalMode), NetworkAccess: body.NetworkAccess}
	if probs := o.Problems(); len(probs) > 0 {
		inv := &invalidError{}
		for _, p := range probs {
			inv.details = append(inv.details, &huma.ErrorDetail{Location: "body.options." + p.Field, Message: p.Message})
		}
		return nil, inv
	}
	if a.cfg.Agents != nil {
		if p, ok := a.cfg.Agents(agentID); ok { // an unknown agent is rejected unknown_agent by the executor
			if _, err := p.EffectiveOptions(o); err != nil {
				return nil, optionProblem(err)
			}
		}
	}
	if needsUnconfined(o) && !principalOf(ctx).has(ScopeUnconfined) {
		return nil, forbidden("options: safetyMode danger-full-access and approvalMode bypass need scope unconfined")
	}
	return o, nil
}

// needsUnconfined reports whether o lifts a run's confinement: a sandbox
// limited by nothing but its own bounds, or tool calls no person approves.
func needsUnconfined(o *events.RunOptions) bool {
	return o.SafetyMode == events.SafetyDangerFullAccess || o.ApprovalMode == events.ApprovalBypass
}

// optionProblem is the 403 of options the profile does not allow; its
// details name each option (body.options.<name>).
func optionProblem(err error) error {
	var oe *profile.OptionError
	if !errors.As(err, &oe) {
		return err // malformed: Problems has refused it already
	}
	details := make([]error, len(oe.Refused))
	for i, r := range oe.Refused {
		details[i] = &huma.ErrorDetail{Location: "body.options." + r.Option, Message: r.String(), Value: r.Asked}
	}
	return newProblem(http.StatusForbidden, events.CodeOptionNotAllowed, "options ask for more than the agent's profile allows", details...)
}
