package epp

// Protocol is the protocol version this host speaks.
const Protocol = "epp/1"

// MaxMessageBytes bounds one protocol line, newline excluded, both ways
// (8 MiB: a 4 MiB file chunk in base64 fits with room to spare).
const MaxMessageBytes = 8 << 20

// Support says what a plugin owes a method of a feature it declares.
type Support string

// Supports.
const (
	// Required: a plugin that declares the method's feature implements it.
	Required Support = "required"
	// Optional: the host tries it and falls back when the plugin answers
	// -32601 (sandbox.connect → sandbox.get) or the feature is missing
	// (exec.start → exec.run).
	Optional Support = "optional"
	// Extension: a plugin may offer it; this host does not call it yet.
	Extension Support = "extension"
)

// Kind of a method.
const (
	KindRequest      = "request"
	KindNotification = "notification"
)

// Directions of a method.
const (
	HostToPlugin = "host_to_plugin"
	PluginToHost = "plugin_to_host"
)

// Field is one parameter or result field: its name, its type and whether
// it must be present. Types are string, integer, number, boolean, object
// (any JSON object), array<T>, a union A|B, or a named type of the table.
type Field struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Description string `json:"description,omitempty"`
}

// Method is one row of the method table.
type Method struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	Direction string  `json:"direction"`
	Feature   string  `json:"feature"`
	Support   Support `json:"support"`
	// Retried: the host repeats the request when the plugin's error says
	// retryable (idempotent methods only).
	Retried bool `json:"retried"`
	// HostCalls: this host sends it (tested: the host's requests over the
	// contract suite include every such method).
	HostCalls   bool    `json:"host_calls"`
	Description string  `json:"description"`
	Params      []Field `json:"params"`
	Result      []Field `json:"result,omitempty"`
}

// Feature is a capability a plugin declares in its manifest.
type Feature struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Features is the feature registry; a manifest's [features] supported is a
// subset of it.
var Features = []Feature{
	{"core", "initialize, shutdown and $/cancel: every plugin (never declared)"},
	{"sandbox.lifecycle", "create, find, list and kill sandboxes (required of every plugin)"},
	{"sandbox.pause", "pause and resume a sandbox"},
	{"sandbox.timeout", "change a sandbox's time to live"},
	{"exec.run", "run a command and answer with its whole output"},
	{"exec.stream", "start a command whose output streams as exec.output notifications; kill it"},
	{"files.rw", "read, write, stat, list, move and remove files"},
	{"ports.url", "the URL and headers that reach a port of the sandbox"},
	{"mounts.read_only", "host directories the run's sandbox sees read-only at their targets (skill versions, the profile's mounts), given in RunScope.read_only_mounts; the plugin reads them from the host"},
}

func f(name, typ string, required bool, desc string) Field {
	return Field{Name: name, Type: typ, Required: required, Description: desc}
}

// sid and run are the first fields of every data-plane call.
var (
	sid = f("sandbox_id", "string", true, "the plugin's id of the sandbox")
	run = f("run", "RunScope", true, "the run the call is made for: its paths, options, environment and limits")
)

// Types are the named types of the table.
var Types = map[string][]Field{
	"HostInfo": {f("name", "string", true, ""), f("version", "string", true, "")},
	"RunScope": {
		f("session_id", "string", true, `the run's session ("" for none)`),
		f("run_id", "string", true, ""),
		f("paths", "Paths", true, "the run's sandbox paths; relative paths resolve in working_directory"),
		f("safety_mode", "string", true, "read-only | workspace-write | danger-full-access"),
		f("network", "boolean", true, "outbound network allowed"),
		f("allow_hosts", "array<string>", false, "IPv4 addresses or CIDRs reachable although private"),
		f("env", "object", false, "extra environment of the run's processes, name → value"),
		f("limits", "Limits", false, "the sandbox's resource limits; absent fields take the plugin's defaults"),
		f("read_only_mounts", "array<Mount>", false, "host directories the sandbox sees read-only (feature mounts.read_only; the host sends none to a plugin without it)"),
	},
	"Mount": {
		f("source", "string", true, "an existing host directory, absolute and clean"),
		f("target", "string", true, "where the sandbox sees it, read-only for commands and the file methods: /skills/<id> or a directory outside the system's and the run's own"),
	},
	"Paths": {
		f("working_directory", "string", true, ""), f("workspace", "string", true, ""),
		f("context", "string", true, ""), f("input", "string", true, "read-only"),
		f("output", "string", true, ""), f("tmp", "string", true, "TMPDIR"),
	},
	"Limits": {
		f("memory_bytes", "integer", false, ""), f("pids", "integer", false, ""),
		f("cpu_millis", "integer", false, ""), f("workspace_bytes", "integer", false, ""),
	},
	"SandboxRecord": {
		f("sandbox_id", "string", true, "at most 256 bytes, no control characters (a run records it)"), f("template", "string", false, ""),
		f("status", "string", true, "creating | running | paused | stopping | stopped | error"),
		f("region", "string", false, ""), f("created_at", "string", false, "RFC 3339"),
		f("expires_at", "string", false, "RFC 3339"), f("metadata", "object", false, "string → string, as given to sandbox.create"),
		f("envd_url", "string", false, ""), f("envd_access_token", "string", false, "secret: never logged"),
		f("url", "string", false, ""),
	},
	"FileEntry": {f("path", "string", true, "sandbox path"), f("size", "integer", true, ""), f("is_dir", "boolean", true, "")},
	"ProcessInfo": {
		f("pid", "string|integer", true, "a process_id of exec.start or the plugin's integer pid"),
		f("cmd", "string", false, ""),
	},
	"Error": {f("code", "integer", true, ""), f("message", "string", true, ""), f("data", "ErrorData", false, "")},
	"ErrorData": {
		f("kind", "string", false, "the typed error the host maps it to (see errors)"),
		f("suggestion", "string", false, ""), f("retryable", "boolean", false, "the host may repeat an idempotent call"),
		f("details", "object", false, "limit_exceeded: resource, limit, mechanism"),
	},
}
