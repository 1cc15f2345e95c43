// Package tools is the tool registry and the built-in tools. A tool declares
// its JSON-Schema parameters and the item type it produces; the registry
// validates arguments before a tool runs, so a malformed call becomes a tool
// error for the model instead of a crash.
package tools

import (
	"context"
	"encoding/json"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// Tool is one capability offered to the model.
type Tool interface {
	// Spec is the name, description and parameter schema shown to the model.
	Spec() model.ToolSpec
	// ItemType is the item the call is recorded as.
	ItemType() events.ItemType
	// Run executes a call whose arguments passed the schema. ctx ends when
	// the run is cancelled or its budget ends; the tool must stop promptly.
	Run(ctx context.Context, call Call) Result
}

// Call is one validated tool call.
type Call struct {
	// ID is the model's call id; ItemID the call's item, unique in the run
	// (name files after it, as Offload does).
	ID        string
	ItemID    string
	Name      string
	Arguments json.RawMessage
	Sandbox   compute.Sandbox
	// Output receives streamed output (stream is "stdout" or "stderr"), may be nil.
	Output func(stream, chunk string)
}

// Result is what a tool call produced. Exactly one of these holds:
//   - ErrorCode != "": the call failed; Output explains it to the model.
//   - Question != "": the tool asks the user (the run pauses).
//   - otherwise the call completed; Output is the model's result.
type Result struct {
	Output     string
	ErrorCode  string // events.ToolErr*
	Question   string
	Exec       *events.ExecData
	FileChange *events.FileChangeData
	// OutputRef is set by Offload: Output is then a preview and the full
	// output is stored at OutputRef.Path.
	OutputRef *events.OutputRef
	// MCP is an MCP server's result, kept as the server sent it.
	MCP *events.MCPResult
}

// Failed returns a tool error result.
func Failed(code, msg string) Result { return Result{ErrorCode: code, Output: msg} }
