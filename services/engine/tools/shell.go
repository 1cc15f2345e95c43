package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// ShellName is the name of the shell tool.
const ShellName = "shell"

type shell struct{ opts Options }

type shellArgs struct {
	Command        string `json:"command"`
	Cwd            string `json:"cwd"`
	TimeoutSeconds count  `json:"timeoutSeconds"`
}

func (s shell) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: ShellName,
		Description: fmt.Sprintf("Run a command with /bin/sh -c in the sandbox and return its exit code, stdout and stderr. "+
			"The working directory defaults to the run's (/workspace unless the run names another). A non-zero exit code is reported, not treated as a failure. "+
			"The command is killed after timeoutSeconds (default %d). stdout and stderr are each cut to %d bytes, "+
			"keeping the beginning and the end. Stdin is empty: do not run interactive programs.",
			int(s.opts.ShellTimeout/time.Second), s.opts.MaxOutputBytes),
		Parameters: []byte(`{
  "type": "object",
  "properties": {
    "command": {"type": "string", "minLength": 1, "description": "The shell command line to run."},
    "cwd": {"type": "string", "description": "Working directory: absolute, or relative to the run's working directory. Default: that directory."},
    "timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "Kill the command after this many seconds."}
  },
  "required": ["command"],
  "additionalProperties": false
}`),
	}
}

func (shell) ItemType() events.ItemType { return events.ItemCommandExecution }

// Run runs the command. A finished command is a completed result whatever
// its exit code or timeout; a sandbox that cannot run it is a tool error, and
// a cancelled ctx is events.ToolErrCancelled (with the output so far in Exec).
func (s shell) Run(ctx context.Context, call Call) Result {
	var a shellArgs
	if r := decode(call, &a); r != nil {
		return *r
	}
	if ctx.Err() != nil {
		return cancelled("shell")
	}
	timeout := s.opts.ShellTimeout
	if a.TimeoutSeconds > 0 {
		timeout = time.Duration(a.TimeoutSeconds) * time.Second
	}
	cwd := resolve(call.Sandbox, a.Cwd)
	var mu sync.Mutex
	stdout := &stream{mu: &mu, name: "stdout", cap: newCapture(s.opts.MaxOutputBytes), out: call.Output}
	stderr := &stream{mu: &mu, name: "stderr", cap: newCapture(s.opts.MaxOutputBytes), out: call.Output}
	start := time.Now()
	res, err := call.Sandbox.Exec(ctx, compute.ExecRequest{
		Command: a.Command, Cwd: cwd, Timeout: timeout, Stdout: stdout, Stderr: stderr,
	})
	elapsed := time.Since(start)
	mu.Lock()
	stdout.close()
	stderr.close()
	data := execData(a.Command, cwd, res, stdout.cap, stderr.cap)
	mu.Unlock()
	if data.DurationMs == 0 {
		data.DurationMs = elapsed.Milliseconds()
	}
	if err != nil {
		return execFailure(ctx, cwd, err, data)
	}
	return Result{Output: execSummary(data, timeout), Exec: data}
}

func execData(command, cwd string, res compute.ExecResult, stdout, stderr *capture) *events.ExecData {
	out, outCut := stdout.text()
	errText, errCut := stderr.text()
	return &events.ExecData{
		Command:    command,
		Cwd:        cwd,
		ExitCode:   res.ExitCode,
		Stdout:     out,
		Stderr:     errText,
		DurationMs: res.Duration.Milliseconds(),
		TimedOut:   res.TimedOut,
		Truncated:  outCut || errCut,
	}
}

// execFailure is the result of an Exec that returned an error.
func execFailure(ctx context.Context, cwd string, err error, data *events.ExecData) Result {
	var r Result
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		r = cancelled("shell")
	case errors.Is(err, compute.ErrSandboxLost):
		r = Failed(events.ToolErrSandboxError, "shell: "+err.Error())
	case errors.Is(err, compute.ErrLimit):
		r = Failed(events.ToolErrLimitExceeded, "shell: "+err.Error())
	case errors.Is(err, compute.ErrNotFound):
		r = Failed(events.ToolErrToolError, fmt.Sprintf("shell: working directory %s does not exist", cwd))
	case errors.Is(err, compute.ErrPathOutside):
		r = Failed(events.ToolErrToolError, fmt.Sprintf("shell: working directory %s is outside the sandbox", cwd))
	default:
		r = Failed(events.ToolErrToolError, fmt.Sprintf("shell: the sandbox could not run the command: %v", err))
	}
	r.Exec = data
	return r
}

// execSummary is what the model reads of a finished command.
func execSummary(d *events.ExecData, timeout time.Duration) string {
	var sb strings.Builder
	if d.TimedOut {
		fmt.Fprintf(&sb, "timed out after %gs: the command was killed\n", timeout.Seconds())
	}
	fmt.Fprintf(&sb, "exit code: %d\n", d.ExitCode)
	section(&sb, "stdout", d.Stdout)
	section(&sb, "stderr", d.Stderr)
	return strings.TrimSuffix(sb.String(), "\n")
}

func section(sb *strings.Builder, name, text string) {
	if text == "" {
		sb.WriteString(name + ": (empty)\n")
		return
	}
	sb.WriteString(name + ":\n" + text)
	if !strings.HasSuffix(text, "\n") {
		sb.WriteString("\n")
	}
}
