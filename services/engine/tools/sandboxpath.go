package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// defaultWorkspace is the workspace path of the sandbox layout, used when a
// sandbox reports none.
const defaultWorkspace = "/workspace"

// workspace returns the sandbox's workspace path.
func workspace(sb compute.Sandbox) string {
	if w := sb.Paths().Workspace; w != "" {
		return w
	}
	return defaultWorkspace
}

// workdir returns the sandbox's working directory: where relative paths
// resolve and commands start.
func workdir(sb compute.Sandbox) string {
	if w := sb.Paths().WorkingDirectory; w != "" {
		return w
	}
	return workspace(sb)
}

// resolve turns a path given by the model into the absolute sandbox path the
// sandbox will use: "" is the working directory, relative paths are
// relative to it. Escapes (..) are left for the sandbox to refuse.
func resolve(sb compute.Sandbox, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(workdir(sb), p)
}

// display is how a resolved path reads in a diff header or a listing:
// relative to the workspace when inside it, else without the leading slash.
func display(sb compute.Sandbox, abs string) string {
	ws := workspace(sb)
	if abs == ws {
		return "."
	}
	if rel, ok := strings.CutPrefix(abs, ws+"/"); ok {
		return rel
	}
	return strings.TrimPrefix(abs, "/")
}

// decode unmarshals arguments that already passed the schema; a failure
// here means the schema and the struct disagree.
func decode(call Call, v any) *Result {
	if err := json.Unmarshal(call.Arguments, v); err != nil {
		res := Failed(events.ToolErrInvalidArguments, fmt.Sprintf("arguments for tool %q: %v", call.Name, err))
		return &res
	}
	return nil
}

// count is a JSON integer argument. JSON Schema accepts 10.0 as the integer
// 10 but encoding/json does not, so it is decoded through float64; the
// schema has already checked that it is whole and in range.
type count int

func (c *count) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*c = count(f)
	return nil
}

// sandboxFailure turns a sandbox error into the tool error the model sees:
// cancelled when ctx ended, otherwise a tool error naming the path.
func sandboxFailure(ctx context.Context, op, p string, err error) Result {
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return cancelled(op + " " + p)
	case errors.Is(err, compute.ErrSandboxLost):
		return Failed(events.ToolErrSandboxError, fmt.Sprintf("%s %s: %v", op, p, err))
	case errors.Is(err, compute.ErrLimit):
		return Failed(events.ToolErrLimitExceeded, fmt.Sprintf("%s %s: %v", op, p, err))
	case errors.Is(err, compute.ErrNotFound):
		return Failed(events.ToolErrToolError, fmt.Sprintf("%s %s: no such file or directory", op, p))
	case errors.Is(err, compute.ErrPathOutside):
		return Failed(events.ToolErrToolError, fmt.Sprintf(
			"%s %s: the path is outside the sandbox (use paths under /workspace or the run's directories)", op, p))
	default:
		return Failed(events.ToolErrToolError, fmt.Sprintf("%s %s: %v", op, p, err))
	}
}

// cancelled is the result of a call whose context ended.
func cancelled(what string) Result {
	return Failed(events.ToolErrCancelled, what+": cancelled before it finished")
}
