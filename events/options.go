package events

// RunOptions are the per-run options a caller may ask for when it creates a
// run or sends a session message (seed 002's agentRun names and values).
// Each is bounded by what the agent profile and the caller's scopes allow;
// the effective options are frozen into the run's capability snapshot. A
// nil field or empty value means the profile's default.
type RunOptions struct {
	// WorkingDirectory is where tool calls start, relative to the workspace
	// root and inside it.
	WorkingDirectory string `json:"workingDirectory,omitempty"`
	// SafetyMode bounds what the sandbox lets a tool call change.
	SafetyMode SafetyMode `json:"safetyMode,omitempty"`
	// ApprovalMode says which tool calls wait for a person.
	ApprovalMode ApprovalMode `json:"approvalMode,omitempty"`
	// NetworkAccess allows (true) or forbids (false) a tool call's network.
	NetworkAccess *bool `json:"networkAccess,omitempty"`
}

// SafetyMode is what the sandbox lets a tool call change.
type SafetyMode string

// Safety modes.
const (
	// SafetyReadOnly: the workspace, the session's context and the system
	// are read-only; only the run's own output and scratch directories
	// (and the sandbox's /tmp) are writable.
	SafetyReadOnly SafetyMode = "read-only"
	// SafetyWorkspaceWrite: the workspace and the run's directories are
	// writable, nothing else.
	SafetyWorkspaceWrite SafetyMode = "workspace-write"
	// SafetyDangerFullAccess: the sandbox's own limits only (its root
	// filesystem is writable too, and the network is always on); tool
	// calls are not taken to stay in the workspace.
	SafetyDangerFullAccess SafetyMode = "danger-full-access"
)

// ApprovalMode says which tool calls wait for a person's decision.
type ApprovalMode string

// Approval modes.
const (
	// ApprovalAsk: the policy decides; a call it sends for approval waits.
	ApprovalAsk ApprovalMode = "ask"
	// ApprovalAuto: calls the policy sends for approval within the workspace
	// run without asking; the rest still ask.
	ApprovalAuto ApprovalMode = "auto"
	// ApprovalBypass: no call waits for approval (the policy's denials still hold).
	ApprovalBypass ApprovalMode = "bypass"
)
