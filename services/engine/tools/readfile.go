package tools

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// ReadFileName is the name of the read_file tool.
const ReadFileName = "read_file"

// maxScanBytes bounds how much of a file read_file reads to find a line
// window: beyond 32 MiB a file is a log or data that the model should search
// with the shell rather than page through.
const maxScanBytes = 32 << 20

// binarySniff is how much of a file is checked for NUL bytes, as git does.
const binarySniff = 8000

type readFile struct{ opts Options }

type readFileArgs struct {
	Path   string `json:"path"`
	Offset count  `json:"offset"`
	Limit  count  `json:"limit"`
}

func (r readFile) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: ReadFileName,
		Description: fmt.Sprintf("Read a text file from the sandbox. Returns the file's content as is, at most %d bytes; "+
			"when there is more, a note at the end gives the offset to continue from. Use offset and limit to read "+
			"a window of lines of a large file.", r.opts.MaxReadBytes),
		Parameters: []byte(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File path: absolute, or relative to the working directory (/workspace unless the run names another)."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to return, 1-based. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return. Default: up to the size cap."}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
	}
}

func (readFile) ItemType() events.ItemType { return events.ItemToolCall }

// Run returns the requested lines of the file. A missing file, a directory,
// a binary file or an offset past the end is a tool error saying so.
func (r readFile) Run(ctx context.Context, call Call) Result {
	var a readFileArgs
	if res := decode(call, &a); res != nil {
		return *res
	}
	if ctx.Err() != nil {
		return cancelled("read_file " + a.Path)
	}
	p := resolve(call.Sandbox, a.Path)
	readCap := int64(r.opts.MaxReadBytes) + 1
	if a.Offset > 1 {
		readCap = maxScanBytes
	}
	data, more, err := call.Sandbox.ReadFile(ctx, p, readCap)
	if err != nil {
		return sandboxFailure(ctx, "read_file", p, err)
	}
	if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		return Failed(events.ToolErrToolError, fmt.Sprintf(
			"read_file %s: the file is binary; inspect it with the shell tool (for example: file, xxd | head)", p))
	}
	return r.window(p, data, more, max(int(a.Offset), 1), int(a.Limit))
}

// window selects limit lines from line offset of data (the file's first
// bytes; more says the file continues) and cuts them to MaxReadBytes.
func (r readFile) window(p string, data []byte, more bool, offset, limit int) Result {
	start := lineStart(data, offset)
	if start < 0 {
		if more {
			return Failed(events.ToolErrToolError, fmt.Sprintf(
				"read_file %s: line %d is beyond the first %d bytes read_file scans; use the shell tool (sed -n) instead",
				p, offset, maxScanBytes))
		}
		return Failed(events.ToolErrToolError, fmt.Sprintf(
			"read_file %s: offset %d is past the end of the file (%d lines)", p, offset, countLines(data)))
	}
	end := len(data)
	if limit > 0 {
		if e := lineStart(data[start:], limit+1); e >= 0 {
			end = start + e
			more = false
		}
	}
	text := data[start:end]
	if len(text) > r.opts.MaxReadBytes {
		text, more = cutAtLine(text, r.opts.MaxReadBytes), true
	}
	if len(data) == 0 {
		return Result{Output: "(the file is empty)"}
	}
	out := strings.ToValidUTF8(string(text), "\uFFFD")
	if more {
		out += continuation(offset, text, r.opts.MaxReadBytes)
	}
	return Result{Output: out}
}

// continuation is the note that ends a truncated read.
func continuation(offset int, text []byte, limit int) string {
	next := offset + bytes.Count(text, []byte("\n"))
	if bytes.IndexByte(text, '\n') < 0 {
		return fmt.Sprintf("\n[truncated: line %d alone is longer than %d bytes; read it with the shell tool (for example: cut -c or head -c)]",
			offset, limit)
	}
	sep := "\n"
	if text[len(text)-1] == '\n' {
		sep = ""
	}
	return fmt.Sprintf("%s[truncated: showing lines %d-%d; the file continues, call read_file with offset=%d to read more]",
		sep, offset, next-1, next)
}

// lineStart is the byte index where 1-based line n starts in data, or -1 when
// data has fewer lines. A final line without a newline counts as a line.
func lineStart(data []byte, n int) int {
	i := 0
	for line := 1; line < n; line++ {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
	}
	if i == len(data) && n > 1 {
		return -1
	}
	return i
}

func countLines(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// cutAtLine cuts text to at most limit bytes, at the end of a line when one
// ends within the limit, else at a character boundary.
func cutAtLine(text []byte, limit int) []byte {
	text = text[:limit]
	if i := bytes.LastIndexByte(text, '\n'); i >= 0 {
		return text[:i+1]
	}
	return text[:len(text)-incompleteSuffix(text)]
}
