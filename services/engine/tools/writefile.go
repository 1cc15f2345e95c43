package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// WriteFileName is the name of the write_file tool.
const WriteFileName = "write_file"

// maxDiffBytes bounds each side of a diff: past 4 MiB the diff is too long to
// be read and too slow to compute, so only the sizes are reported.
const maxDiffBytes = 4 << 20

type writeFile struct{ opts Options }

type writeFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (writeFile) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: WriteFileName,
		Description: "Write a text file in the sandbox, replacing it entirely if it exists and creating missing " +
			"parent directories. Give the complete new content. Returns what changed, line counts added and removed.",
		Parameters: []byte(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File path: absolute, or relative to the working directory (/workspace unless the run names another)."},
    "content": {"type": "string", "description": "The complete content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
	}
}

func (writeFile) ItemType() events.ItemType { return events.ItemFileChange }

// Run writes the file and reports in FileChange the unified diff between the
// previous content (none: created, diffed from /dev/null) and the content
// read back after writing, so the diff shows what is on disk even when the
// sandbox changed it.
func (w writeFile) Run(ctx context.Context, call Call) Result {
	var a writeFileArgs
	if r := decode(call, &a); r != nil {
		return *r
	}
	if ctx.Err() != nil {
		return cancelled("write_file " + a.Path)
	}
	sb, p := call.Sandbox, resolve(call.Sandbox, a.Path)
	old, oldBig, err := sb.ReadFile(ctx, p, maxDiffBytes+1)
	created := errors.Is(err, compute.ErrNotFound)
	if err != nil && !created {
		return sandboxFailure(ctx, "write_file: read the current content of", p, err)
	}
	if err := sb.WriteFile(ctx, p, []byte(a.Content)); err != nil {
		return sandboxFailure(ctx, "write_file", p, err)
	}
	got, gotBig, err := sb.ReadFile(ctx, p, max(maxDiffBytes+1, int64(len(a.Content))+1))
	if err != nil {
		return sandboxFailure(ctx, "write_file: read back", p, err)
	}
	change := &events.FileChangeData{Path: p, Created: created, Bytes: len(got)}
	change.Diff = capDiff(fileDiff(display(sb, p), old, got, created, oldBig || gotBig), w.opts.MaxDiffBytes)
	return Result{Output: writeSummary(change, got, a.Content), FileChange: change}
}

// fileDiff is the unified diff of a file's change, or a one-line note when
// either side is binary or too large to diff.
func fileDiff(name string, old, got []byte, created, big bool) string {
	from := "a/" + name
	if created {
		from = "/dev/null"
	}
	switch {
	case big:
		return fmt.Sprintf("Files %s and b/%s differ (too large to diff: more than %d bytes)\n", from, name, maxDiffBytes)
	case isBinary(old) || isBinary(got):
		if bytes.Equal(old, got) {
			return ""
		}
		return fmt.Sprintf("Binary files %s and b/%s differ\n", from, name)
	}
	return unifiedDiff(from, "b/"+name, string(old), string(got))
}

// capDiff cuts a diff longer than limit after its last whole hunk that fits
// (or its last whole line, if not even the first hunk fits) and appends a
// line saying how much is not shown.
func capDiff(d string, limit int) string {
	if len(d) <= limit {
		return d
	}
	cut := strings.LastIndex(d[:limit+1], "\n@@ ")
	if cut < 0 {
		cut = strings.LastIndexByte(d[:limit], '\n')
	}
	cut++ // keep the newline
	return d[:cut] + fmt.Sprintf("[diff truncated: %d of %d bytes shown]\n", cut, len(d))
}

func isBinary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), binarySniff)], 0) >= 0 }

// writeSummary is what the model reads: what happened to the file, and a
// warning when the file does not hold what was sent.
func writeSummary(c *events.FileChangeData, got []byte, sent string) string {
	var s string
	switch {
	case c.Created:
		s = fmt.Sprintf("created %s (%d bytes, %s)", c.Path, len(got), plural(countLines(got), "line"))
	case c.Diff == "":
		s = fmt.Sprintf("%s already had this content (%d bytes); nothing changed", c.Path, len(got))
	default:
		s = fmt.Sprintf("wrote %s (%d bytes, %s)", c.Path, len(got), plural(countLines(got), "line"))
		if added, removed, ok := diffStat(c.Diff); ok {
			s += fmt.Sprintf(": +%d -%d lines", added, removed)
		}
	}
	if string(got) != sent {
		s += fmt.Sprintf("\nwarning: the file read back (%d bytes) differs from the content sent (%d bytes)", len(got), len(sent))
	}
	return s
}

// diffStat counts the added and removed lines of a unified diff; ok is false
// for a note that is not one.
func diffStat(diff string) (added, removed int, ok bool) {
	lines := splitLines(diff)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") {
		return 0, 0, false
	}
	for _, l := range lines[2:] {
		switch l[0] {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed, true
}

// plural is "1 line", "2 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
