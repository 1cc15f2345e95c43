package epp

// Method names.
const (
	MInitialize      = "initialize"
	MShutdown        = "shutdown"
	MCancel          = "$/cancel"
	MSandboxCreate   = "sandbox.create"
	MSandboxGet      = "sandbox.get"
	MSandboxConnect  = "sandbox.connect"
	MSandboxList     = "sandbox.list"
	MSandboxKill     = "sandbox.kill"
	MSandboxPause    = "sandbox.pause"
	MSandboxResume   = "sandbox.resume"
	MSandboxTimeout  = "sandbox.set_timeout"
	MExecRun         = "exec.run"
	MExecStart       = "exec.start"
	MExecOutput      = "exec.output"
	MExecExit        = "exec.exit"
	MProcessList     = "process.list"
	MProcessKill     = "process.kill"
	MProcessSignal   = "process.send_signal"
	MProcessInput    = "process.send_input"
	MFilesRead       = "files.read"
	MFilesWrite      = "files.write"
	MFilesStat       = "files.stat"
	MFilesList       = "files.list"
	MFilesMove       = "files.move"
	MFilesRemove     = "files.remove"
	MPortsURL        = "ports.url"
	MLog             = "log"
	MProgress        = "progress"
	featCore         = "core"
	featLifecycle    = "sandbox.lifecycle"
	featExecRun      = "exec.run"
	featExecStream   = "exec.stream"
	featFiles        = "files.rw"
	featPause        = "sandbox.pause"
	featTimeout      = "sandbox.timeout"
	featPorts        = "ports.url"
	featMounts       = "mounts.read_only"
	sandboxRecordDoc = "the sandbox"
)

func req(name, feature string, s Support, retried, hostCalls bool, desc string, params, result []Field) Method {
	return Method{Name: name, Kind: KindRequest, Direction: HostToPlugin, Feature: feature, Support: s,
		Retried: retried, HostCalls: hostCalls, Description: desc, Params: params, Result: result}
}

func note(name, dir, feature string, hostCalls bool, desc string, params []Field) Method {
	return Method{Name: name, Kind: KindNotification, Direction: dir, Feature: feature, Support: Required,
		HostCalls: hostCalls, Description: desc, Params: params}
}

var (
	recordFields = []Field{f("sandbox", "SandboxRecord", true, sandboxRecordDoc)}
	execFields   = []Field{sid, run, f("cmd", "string", true, "run by /bin/sh -c"),
		f("cwd", "string", false, "sandbox path; absent = the run's working directory"),
		f("envs", "object", false, "more environment for this command, name → value"),
		f("timeout", "number", false, "seconds; the plugin kills the command's processes when it elapses"),
		f("stdin_b64", "string", false, "the command's whole standard input (absent = empty)"),
		f("combined", "boolean", false, "stderr shares stdout's pipe: one stream (stdout), in the order written")}
	pid = f("pid", "string|integer", true, "a process_id of exec.start, or an integer pid of process.list")
)

// Methods is the normative method table of EPP/1, in the order of
// docs/epp-methods.json.
var Methods = []Method{
	req(MInitialize, featCore, Required, false, true, "the first request; the plugin's settings arrive here and nowhere else",
		[]Field{f("protocol", "string", true, `"epp/1"`), f("host", "HostInfo", true, ""),
			f("config", "object", true, "the provider's settings, name → string value (secrets included)"),
			f("data_dir", "string", true, "the plugin's own state directory (also its working directory)")},
		[]Field{f("protocol", "string", true, `"epp/1"`), f("name", "string", false, ""), f("version", "string", false, ""),
			f("features", "array<string>", false, "what this process supports; the host uses the manifest's features that are also listed here"),
			f("isolation", "string", false, "what separates sandboxes from the host: none, namespaces, vm, remote"),
			f("limits_mechanism", "string", false, "what enforces Limits (e.g. cgroup v2)")}),
	req(MShutdown, featCore, Required, false, true, "the last request; the host then closes stdin", nil, nil),
	note(MCancel, HostToPlugin, featCore, true, "stop the work of request id (kill an exec.start's or exec.run's processes); a pending request still gets its answer",
		[]Field{f("id", "integer", true, "the request's id")}),
	req(MSandboxCreate, featLifecycle, Required, false, true, "create a sandbox",
		[]Field{f("template", "string", false, ""), f("metadata", "object", true, "string → string; the host sets xbot_key"),
			f("timeout", "number", false, "time to live, seconds"), f("secure", "boolean", false, "sent only when the caller set it"),
			f("options", "object", false, "per-create settings of declared, non-secret fields")}, recordFields),
	req(MSandboxGet, featLifecycle, Required, true, true, "the record of a sandbox; -32002 when it does not exist",
		[]Field{sid}, recordFields),
	req(MSandboxConnect, featLifecycle, Optional, true, true, "attach to (and resume) an existing sandbox; without it the host uses sandbox.get",
		[]Field{sid, f("timeout", "number", false, "time to live, seconds")}, recordFields),
	req(MSandboxList, featLifecycle, Required, true, true, "sandboxes whose metadata contain every given pair, a page at a time",
		[]Field{f("metadata", "object", false, "filter"), f("cursor", "string", false, "from next"), f("limit", "integer", false, "")},
		[]Field{f("sandboxes", "array<SandboxRecord>", true, ""), f("next", "string", false, "absent on the last page")}),
	req(MSandboxKill, featLifecycle, Required, true, true, "end a sandbox and remove what it holds; an unknown id is no error",
		[]Field{sid}, []Field{f("killed", "boolean", true, "false when there was no such sandbox")}),
	req(MSandboxPause, featPause, Optional, false, false, "pause a sandbox", []Field{sid}, nil),
	req(MSandboxResume, featPause, Optional, false, false, "resume a paused sandbox",
		[]Field{sid, f("timeout", "number", false, "seconds")}, recordFields),
	req(MSandboxTimeout, featTimeout, Optional, false, false, "set a sandbox's time to live",
		[]Field{sid, f("timeout", "number", true, "seconds")}, nil),
	req(MExecRun, featExecRun, Required, false, true, "run a command to its end; the host's fallback when exec.stream is missing", execFields,
		[]Field{f("exit_code", "integer", true, "128+signal when a signal ended it"), f("stdout", "string", true, "text; invalid UTF-8 replaced"),
			f("stderr", "string", true, ""), f("stdout_b64", "string", false, "the exact bytes; the host prefers them"),
			f("stderr_b64", "string", false, ""), f("timed_out", "boolean", false, ""),
			f("error", "Error", false, "the command ran but hit a limit (kind limit_exceeded)")}),
	req(MExecStart, featExecStream, Required, false, true, "start a command; the answer (its process_id) comes before any exec.output of it, and a command that cannot start ends at once with an exec.exit carrying the error", execFields,
		[]Field{f("process_id", "string", true, ""), f("pid", "integer", false, "")}),
	note(MExecOutput, PluginToHost, featExecStream, false, "output of a started process, in order, before its exec.exit",
		[]Field{f("process_id", "string", true, ""), f("stream", "string", true, "stdout | stderr"), f("data_b64", "string", true, "")}),
	note(MExecExit, PluginToHost, featExecStream, false, "exactly once per started process, after all its output",
		[]Field{f("process_id", "string", true, ""), f("exit_code", "integer", true, ""), f("timed_out", "boolean", false, ""),
			f("error", "Error", false, "the command ran but hit a limit (kind limit_exceeded)")}),
	req(MProcessList, featExecStream, Optional, false, false, "the sandbox's running processes", []Field{sid},
		[]Field{f("processes", "array<ProcessInfo>", true, "")}),
	req(MProcessKill, featExecStream, Required, false, true, "kill a process and its group (exec.exit follows)", []Field{sid, pid},
		[]Field{f("killed", "boolean", true, "false when it had ended")}),
	req(MProcessSignal, featExecStream, Optional, false, false, "send a signal", []Field{sid, pid, f("signal", "string", true, "e.g. SIGTERM")}, nil),
	req(MProcessInput, featExecStream, Extension, false, false, "write to a process's standard input",
		[]Field{sid, pid, f("data_b64", "string", true, ""), f("eof", "boolean", false, "close stdin after")}, nil),
	req(MFilesRead, featFiles, Required, true, true, "read a regular file, a range at a time",
		[]Field{sid, run, f("path", "string", true, ""), f("offset", "integer", false, "bytes to skip"),
			f("limit", "integer", false, "most bytes to return (absent: all)")},
		[]Field{f("data_b64", "string", true, ""), f("truncated", "boolean", true, "the file goes on after the bytes returned")}),
	req(MFilesWrite, featFiles, Required, false, true, "replace a regular file, creating parent directories",
		[]Field{sid, run, f("path", "string", true, ""), f("data_b64", "string", true, "")}, nil),
	req(MFilesStat, featFiles, Required, true, false, "describe a file or directory",
		[]Field{sid, run, f("path", "string", true, "")}, []Field{f("entry", "FileEntry", true, "")}),
	req(MFilesList, featFiles, Required, true, true, "list a directory recursively, sorted by path; symlinks are never followed",
		[]Field{sid, run, f("path", "string", true, ""), f("depth", "integer", false, "levels, 1 = direct children (absent: 1)")},
		[]Field{f("entries", "array<FileEntry>", true, "")}),
	req(MFilesMove, featFiles, Optional, false, false, "rename a file or directory",
		[]Field{sid, run, f("source", "string", true, ""), f("destination", "string", true, "")}, nil),
	req(MFilesRemove, featFiles, Optional, false, false, "remove a file or directory",
		[]Field{sid, run, f("path", "string", true, ""), f("recursive", "boolean", false, "")}, nil),
	req(MPortsURL, featPorts, Extension, true, false, "the URL and headers that reach a port", []Field{sid, f("port", "integer", true, "")},
		[]Field{f("url", "string", true, ""), f("headers", "object", false, "")}),
	note(MLog, PluginToHost, featCore, false, "a line for the host's log", []Field{f("level", "string", false, "debug | info | warn | error"), f("message", "string", true, "")}),
	note(MProgress, PluginToHost, featCore, false, "progress of a long request", []Field{f("message", "string", true, ""), f("percent", "number", false, "")}),
}

// method returns the table's row for name.
func method(name string) (Method, bool) {
	for _, m := range Methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}
