package events

import (
	"path"
	"strings"
)

// MaxWorkingDirectoryBytes bounds RunOptions.WorkingDirectory: well below
// Linux's PATH_MAX (4096) once /workspace is put in front of it.
const MaxWorkingDirectoryBytes = 1024

// maxNameBytes is Linux's NAME_MAX: no directory name is longer.
const maxNameBytes = 255

// OptionProblem is one malformed field of RunOptions, named as on the wire
// (workingDirectory, safetyMode, approvalMode).
type OptionProblem struct {
	Field   string
	Message string
}

// Problems reports every malformed field of o: a mode that is not one of
// its values, a working directory that is not a clean relative path inside
// the workspace, or networkAccess false with safetyMode danger-full-access
// (which always has the network on, as seed 002 says). It says nothing of
// what a profile allows.
func (o RunOptions) Problems() []OptionProblem {
	var out []OptionProblem
	if msg := workingDirectoryProblem(o.WorkingDirectory); msg != "" {
		out = append(out, OptionProblem{Field: "workingDirectory", Message: msg})
	}
	if o.SafetyMode != "" && !o.SafetyMode.Valid() {
		out = append(out, OptionProblem{Field: "safetyMode", Message: "must be one of read-only, workspace-write, danger-full-access"})
	}
	if o.ApprovalMode != "" && !o.ApprovalMode.Valid() {
		out = append(out, OptionProblem{Field: "approvalMode", Message: "must be one of ask, auto, bypass"})
	}
	if o.SafetyMode == SafetyDangerFullAccess && o.NetworkAccess != nil && !*o.NetworkAccess {
		out = append(out, OptionProblem{Field: "networkAccess", Message: "is always true with safetyMode danger-full-access"})
	}
	return out
}

// workingDirectoryProblem says what is wrong with a working directory, or
// "" when it is empty (the workspace root) or a clean relative path that
// stays inside the workspace.
func workingDirectoryProblem(wd string) string {
	switch {
	case wd == "":
		return ""
	case len(wd) > MaxWorkingDirectoryBytes:
		return "must be at most 1024 bytes"
	case strings.ContainsFunc(wd, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "must not hold control characters"
	case path.IsAbs(wd):
		return "must be relative to the workspace root, not absolute"
	case path.Clean(wd) != wd:
		return "must be a clean path (no empty, . or .. segments, no trailing slash)"
	case wd == ".." || strings.HasPrefix(wd, "../"):
		return "must stay inside the workspace (no ..)"
	}
	for _, seg := range strings.Split(wd, "/") {
		if len(seg) > maxNameBytes {
			return "each directory name must be at most 255 bytes"
		}
	}
	return ""
}

// Valid reports whether m is one of the safety modes.
func (m SafetyMode) Valid() bool {
	return m == SafetyReadOnly || m == SafetyWorkspaceWrite || m == SafetyDangerFullAccess
}

// Valid reports whether m is one of the approval modes.
func (m ApprovalMode) Valid() bool {
	return m == ApprovalAsk || m == ApprovalAuto || m == ApprovalBypass
}
