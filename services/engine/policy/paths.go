package policy

import (
	"path"
	"regexp"
	"strings"
)

// workspaceDir is where the file tools resolve a relative path, as the
// sandbox layout puts it.
const workspaceDir = "/workspace"

// pathTools are the built-in tools whose "path" argument names one file or
// directory. Rules on that argument see it as the tool will open it:
// absolute, cleaned, relative paths joined to the workspace.
var pathTools = map[string]bool{
	"read_file": true, "read_file_part": true, "write_file": true, "list_files": true,
}

// pathArgument is the argument pathTools take their path in.
const pathArgument = "path"

// resolvePath returns p as the file tools resolve it: relative paths are
// joined to dir (the run's working directory, /workspace by default), "."
// and ".." and repeated slashes are resolved lexically.
// /workspace/.ssh//id_rsa and /workspace/x/../.ssh/id_rsa both become
// /workspace/.ssh/id_rsa.
func resolvePath(dir, p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(dir, p)
}

// slashRuns and dotSegment are what collapseSlashes removes.
var (
	slashRuns  = regexp.MustCompile(`/{2,}`)
	dotSegment = regexp.MustCompile(`/(?:\./)+`)
)

// collapseSlashes rewrites the path spellings that name the same file in a
// shell command: "//" becomes "/", "/./" becomes "/". It does not resolve
// "..", which needs the path's boundaries the text does not give.
func collapseSlashes(s string) string {
	for {
		next := dotSegment.ReplaceAllString(slashRuns.ReplaceAllString(s, "/"), "/")
		if next == s {
			return s
		}
		s = next
	}
}

// matchValue reports whether r's patterns decide value.
func (r *compiled) matchValue(value string) bool {
	if r.pattern != nil && !r.pattern.MatchString(value) {
		return false
	}
	return r.unless == nil || !r.unless.MatchString(value)
}

// matchArgument matches r against the argument value of a call of tool. A
// path tool's path is matched resolved, by every rule. Any other value is
// matched as written; a deny or approval rule also matches it with the
// slashes collapsed, so /workspace/.ssh//id_rsa in a command is caught
// where /workspace/.ssh/id_rsa is. An allow rule never gains a call that
// way.
func (r *compiled) matchArgument(tool, value, dir string) bool {
	if pathTools[tool] && strings.EqualFold(r.Argument, pathArgument) {
		return r.matchValue(resolvePath(dir, value))
	}
	if r.matchValue(value) {
		return true
	}
	if r.Action == Allow {
		return false
	}
	collapsed := collapseSlashes(value)
	return collapsed != value && r.matchValue(collapsed)
}
