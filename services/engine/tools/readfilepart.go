package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
)

// ReadFilePartName is the name of the read_file_part tool.
const ReadFilePartName = "read_file_part"

const (
	// defaultPartLength is the bytes read_file_part returns when the call
	// names no length: 16 KiB, about 4k tokens, a screenful of a log.
	defaultPartLength = 16 << 10
	// maxPartLength caps one read_file_part call: 64 KiB, about 16k tokens,
	// so a single part never crowds out the rest of the context.
	maxPartLength = 64 << 10
)

type readFilePart struct{}

type readFilePartArgs struct {
	Path   string `json:"path"`
	Offset count  `json:"offset"`
	Length count  `json:"length"`
}

func (readFilePart) Spec() model.ToolSpec {
	return model.ToolSpec{
		Name: ReadFilePartName,
		Description: "Read a byte range of a text file in the sandbox, typically a large tool output stored in the " +
			"run's output directory. The result starts with a line giving the range returned, the file's size and " +
			"its sha256, and the offset of the next part; the range is adjusted to whole UTF-8 characters.",
		Parameters: []byte(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File path: absolute, or relative to the working directory (/workspace unless the run names another)."},
    "offset": {"type": "integer", "minimum": 0, "description": "First byte to read, 0-based. Default 0."},
    "length": {"type": "integer", "minimum": 1, "maximum": %d, "description": "Number of bytes to read. Default %d."}
  },
  "required": ["path"],
  "additionalProperties": false
}`, maxPartLength, defaultPartLength)),
	}
}

func (readFilePart) ItemType() events.ItemType { return events.ItemToolCall }

// Run returns the requested bytes of the file. A missing file, an offset
// past the end, or a range that is not UTF-8 text is a tool error saying so.
// Files are read up to 32 MiB; beyond that the tool points to the shell.
func (readFilePart) Run(ctx context.Context, call Call) Result {
	var a readFilePartArgs
	if r := decode(call, &a); r != nil {
		return *r
	}
	p := resolve(call.Sandbox, a.Path)
	if ctx.Err() != nil {
		return cancelled(ReadFilePartName + " " + p)
	}
	data, more, err := call.Sandbox.ReadFile(ctx, p, maxScanBytes)
	if err != nil {
		return sandboxFailure(ctx, ReadFilePartName, p, err)
	}
	length := int(a.Length)
	if length == 0 {
		length = defaultPartLength
	}
	return part(p, data, more, int(a.Offset), length)
}

// part is the result of reading length bytes at offset of data, the file's
// first bytes (more says the file continues).
func part(p string, data []byte, more bool, offset, length int) Result {
	if offset >= len(data) && (offset > 0 || more) {
		if more {
			return Failed(events.ToolErrToolError, fmt.Sprintf(
				"%s %s: offset %d is beyond the first %d bytes %s reads; use the shell tool (for example: tail -c +%d %s | head -c %d)",
				ReadFilePartName, p, offset, maxScanBytes, ReadFilePartName, offset+1, p, length))
		}
		return Failed(events.ToolErrToolError, fmt.Sprintf(
			"%s %s: offset %d is past the end of the file (%d bytes)", ReadFilePartName, p, offset, len(data)))
	}
	sum := sha256.Sum256(data)
	if len(data) == 0 {
		return Result{Output: fmt.Sprintf("the file is empty (0 bytes, sha256 %s)", hex.EncodeToString(sum[:]))}
	}
	start, end := span(data, offset, length, more)
	chunk := data[start:end]
	if !utf8.Valid(chunk) {
		return Failed(events.ToolErrToolError, fmt.Sprintf(
			"%s %s: bytes %d-%d are not UTF-8 text (binary data); inspect them with the shell tool (for example: xxd -s %d -l %d %s)",
			ReadFilePartName, p, start, end-1, start, end-start, p))
	}
	return Result{Output: partHeader(start, end, len(data), more, sum[:]) + "\n" + string(chunk)}
}

// partHeader describes the bytes [start, end) of a file of size bytes (more
// than size when more is set, and then the digest is unknown).
func partHeader(start, end, size int, more bool, sum []byte) string {
	if more {
		return fmt.Sprintf("bytes %d-%d of more than %d (too large to checksum); the next part starts at offset %d",
			start, end-1, size, end)
	}
	h := fmt.Sprintf("bytes %d-%d of %d (sha256 %s)", start, end-1, size, hex.EncodeToString(sum))
	if end < size {
		return h + fmt.Sprintf("; the next part starts at offset %d", end)
	}
	return h + "; end of file"
}

// span is the byte range [start, end) to return for length bytes at offset
// of data: start moves back to the start of the character holding offset,
// end moves back to a character start, so that consecutive parts tile the
// file; a range that would hold no whole character keeps its first one.
func span(data []byte, offset, length int, more bool) (start, end int) {
	start = offset
	for i := 0; i < utf8.UTFMax-1 && start > 0 && !utf8.RuneStart(data[start]); i++ {
		start--
	}
	end = min(offset+length, len(data))
	switch {
	case end < len(data):
		for i := 0; i < utf8.UTFMax-1 && end > start && !utf8.RuneStart(data[end]); i++ {
			end--
		}
	case more:
		end -= incompleteSuffix(data[start:end])
	}
	if end <= start {
		_, n := utf8.DecodeRune(data[start:])
		end = start + n
	}
	return start, end
}
