package epp

import (
	"bytes"
	"encoding/json"
)

// ErrorCode is one JSON-RPC error code of EPP/1.
type ErrorCode struct {
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Meaning string `json:"meaning"`
}

// ErrorKind is one data.kind: the code a plugin answers it with and what
// the host makes of it.
type ErrorKind struct {
	Kind   string `json:"kind"`
	Code   int    `json:"code"`
	MapsTo string `json:"maps_to"`
}

// ErrorCodes are the codes a plugin answers with.
var ErrorCodes = []ErrorCode{
	{CodeParse, "parse_error", "the request is not JSON (the host never sends one)"},
	{CodeInvalidRequest, "invalid_request", "not a JSON-RPC 2.0 request"},
	{CodeMethodNotFound, "method_not_found", "the plugin does not implement the method: an optional one makes the host fall back, another fails as feature not supported"},
	{CodeInvalidParams, "invalid_params", "a required parameter is missing or of the wrong type"},
	{CodeInternal, "internal_error", "the plugin failed"},
	{CodeFailed, "failed", "the provider could not do it; data.kind may say why"},
	{CodeRefused, "refused", "the provider will not do it (an argument, a permission); data.kind may say why"},
	{CodeNotFound, "not_found", "without a kind: the sandbox does not exist (a file's absence is kind file_not_found)"},
}

// ErrorKinds is the error-mapping table.
var ErrorKinds = []ErrorKind{
	{KindSandboxNotFound, CodeNotFound, "sandbox not found; on a run's sandbox: the sandbox is lost (sandbox_error)"},
	{KindFileNotFound, CodeNotFound, "file not found (compute.ErrNotFound)"},
	{KindPathOutside, CodeRefused, "path outside the sandbox (compute.ErrPathOutside)"},
	{KindPermissionDenied, CodeRefused, "permission denied (fs.ErrPermission), e.g. a write in a read-only workspace"},
	{KindLimitExceeded, CodeFailed, "resource limit reached (compute.LimitError; details resource memory|pids|workspace, limit, mechanism); the tool fails limit_exceeded"},
	{KindFeatureNotSupported, CodeMethodNotFound, "feature not supported"},
	{KindInvalidArgument, CodeRefused, "invalid argument"},
	{KindTimeout, CodeFailed, "timed out"},
	{KindUnavailable, CodeFailed, "provider unavailable (compute.ErrUnavailable)"},
}

// fixture is docs/epp-methods.json.
type fixture struct {
	Protocol        string             `json:"protocol"`
	MaxMessageBytes int                `json:"max_message_bytes"`
	Framing         string             `json:"framing"`
	Support         map[string]string  `json:"support"`
	Features        []Feature          `json:"features"`
	Types           map[string][]Field `json:"types"`
	Methods         []Method           `json:"methods"`
	ErrorCodes      []ErrorCode        `json:"error_codes"`
	ErrorKinds      []ErrorKind        `json:"error_kinds"`
}

// Fixture renders the method table as published in docs/epp-methods.json:
// a third party writes a plugin from it and docs/providers.md alone.
func Fixture() []byte {
	fx := fixture{
		Protocol: Protocol, MaxMessageBytes: MaxMessageBytes,
		Framing: "one JSON-RPC 2.0 object per line of UTF-8, ended by \\n, on the plugin's stdin (host to plugin) " +
			"and stdout (plugin to host); no batches; stderr is free-form log text. Both sides ignore fields they do not know.",
		Support: map[string]string{string(Required): "a plugin declaring the feature implements it",
			string(Optional):  "the host falls back when the plugin answers -32601 or lacks the feature",
			string(Extension): "a plugin may offer it; the host does not call it yet"},
		Features: Features, Types: Types, Methods: Methods, ErrorCodes: ErrorCodes, ErrorKinds: ErrorKinds,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(fx); err != nil {
		panic(err) // plain data: cannot fail
	}
	return buf.Bytes()
}
