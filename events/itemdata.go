package events

import "encoding/json"

// The Data of item events, by item type. Payloads carry them as raw JSON so
// the catalog stays stable while item kinds grow; these types are the
// contract for what the engine writes and what projections read.

// ToolCallRef is one tool call requested by the model.
type ToolCallRef struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text exactly as the model produced it
}

// Usage is the token accounting of one model call.
type Usage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	TotalTokens      int `json:"totalTokens"`
}

// AssistantData is the Data of runtime.item.completed for an
// assistant_message: the model call's result beyond its text.
type AssistantData struct {
	// Turn is the 0-based model call index within the run.
	Turn         int           `json:"turn"`
	ToolCalls    []ToolCallRef `json:"toolCalls,omitempty"`
	FinishReason string        `json:"finishReason,omitempty"`
	Model        string        `json:"model,omitempty"`
	Usage        *Usage        `json:"usage,omitempty"`
}

// UserMessageData is the Data of runtime.item.started for a user_message
// that entered a running run (a steer).
type UserMessageData struct {
	Intent    string `json:"intent"`
	CommandID string `json:"commandId,omitempty"`
}

// ToolCallData is the Data of runtime.item.started for an item that runs a
// tool (command_execution, file_change, tool_call, clarification_request).
type ToolCallData struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Arguments  string `json:"arguments"`
	// ResponseItemID is the assistant_message whose response requested the call.
	ResponseItemID string `json:"responseItemId"`
	// Question is the question of a clarification_request.
	Question string `json:"question,omitempty"`
	// GrantID is the permission grant that let a call the policy sends for
	// approval run without asking.
	GrantID string `json:"grantId,omitempty"`
	// MCP names the server and its tool of an mcp_tool_call (ToolName is
	// the name the model was offered, <server>__<tool>).
	MCP *MCPCall `json:"mcp,omitempty"`
}

// MCPCall is the MCP server and the tool on it an mcp_tool_call calls.
type MCPCall struct {
	Server string `json:"server"`
	// Tool is the tool's name on its server.
	Tool string `json:"tool"`
}

// MCPResult is an MCP server's result of an mcp_tool_call, as it sent it.
type MCPResult struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Content are the result's MCP content blocks (text, image, audio,
	// resource_link, resource) as the server sent them, except that image or
	// audio data and resource blobs larger than the run's offload threshold
	// are stored in the run's output directory: such a block has no data
	// (blob) and its _meta["xbot/outputRef"] is the OutputRef of the file.
	Content []json.RawMessage `json:"content"`
	// StructuredContent is the result's structured value, if any, unless
	// it was larger than the offload threshold: it is then stored at
	// StructuredContentRef.
	StructuredContent    json.RawMessage `json:"structuredContent,omitempty"`
	StructuredContentRef *OutputRef      `json:"structuredContentRef,omitempty"`
	// IsError is the server's own verdict: the tool ran and failed; the
	// model sees the content and may correct its call.
	IsError    bool  `json:"isError"`
	DurationMs int64 `json:"durationMs"`
}

// MCPOutputRefMeta is the _meta key of an MCP content block whose binary
// data was stored in the run's output directory.
const MCPOutputRefMeta = "xbot/outputRef"

// ToolResultData is the Data of runtime.item.completed for a tool item.
type ToolResultData struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	// Output is the text the model receives as the tool's result.
	Output     string          `json:"output"`
	Exec       *ExecData       `json:"exec,omitempty"`
	FileChange *FileChangeData `json:"fileChange,omitempty"`
	// OutputRef is set when the full output was too large for the context:
	// Output is then a head/tail preview and the whole is stored at the ref.
	OutputRef *OutputRef `json:"outputRef,omitempty"`
	// MCP is the server's result of an mcp_tool_call.
	MCP *MCPResult `json:"mcp,omitempty"`
}

// OutputRef points at a tool output offloaded to the run's output directory;
// read_file_part reads ranges of it.
type OutputRef struct {
	// Path is the sandbox path of the stored output.
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// SHA256 is the hex digest of the stored bytes.
	SHA256 string `json:"sha256"`
}

// ExecData describes a finished command_execution.
type ExecData struct {
	Command    string `json:"command"`
	Cwd        string `json:"cwd"`
	ExitCode   int    `json:"exitCode"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	DurationMs int64  `json:"durationMs"`
	TimedOut   bool   `json:"timedOut,omitempty"`
	// Truncated says stdout or stderr was cut to the size limit.
	Truncated bool `json:"truncated,omitempty"`
}

// FileChangeData describes a finished file_change.
type FileChangeData struct {
	Path string `json:"path"`
	// Diff is a unified diff of what was actually written.
	Diff    string `json:"diff"`
	Created bool   `json:"created,omitempty"`
	Bytes   int    `json:"bytes"`
}

// Error codes of failed tool items.
const (
	ToolErrUnknownTool      = "unknown_tool"
	ToolErrInvalidArguments = "invalid_arguments"
	ToolErrToolError        = "tool_error"
	ToolErrCancelled        = "cancelled"
	ToolErrRuntimeLost      = FailRuntimeLost
	ToolErrBudgetExhausted  = FailBudgetExhausted
	// ToolErrBlockedByPolicy: a policy rule forbids the call; nobody was asked.
	ToolErrBlockedByPolicy = "blocked_by_policy"
	// ToolErrDeniedByUser: a person denied the call when asked.
	ToolErrDeniedByUser = "denied_by_user"
	// ToolErrExpired: the run's pause outlived its TTL before anyone answered.
	ToolErrExpired = "expired"
	// ToolErrLimitExceeded: the call reached a resource limit of its sandbox
	// (memory, processes, workspace size); the message names the limit.
	ToolErrLimitExceeded = "limit_exceeded"
	// ToolErrTimedOut: the call did not end within its timeout (an MCP
	// server's callTimeout) and was cancelled.
	ToolErrTimedOut = "timed_out"
	// ToolErrSandboxError: the run's sandbox itself was lost while the call
	// ran (deleted, or its provider crashed); the run fails with the same
	// code and the key's next run gets a fresh sandbox.
	ToolErrSandboxError = FailSandboxError
)

// RunsTool reports whether items of type t record a tool call: their Data is
// ToolCallData when they start and ToolResultData when they complete.
func (t ItemType) RunsTool() bool {
	switch t {
	case ItemCommandExecution, ItemFileChange, ItemToolCall, ItemMCPToolCall, ItemClarificationRequest:
		return true
	case ItemUserMessage, ItemAssistantMessage, ItemReasoning, ItemPlan, ItemContextCompaction:
		return false
	}
	return false
}
