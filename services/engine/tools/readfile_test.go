package tools_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	write(t, sb, "notes.txt", "one\ntwo\nthree\nfour\nfive")
	write(t, sb, "empty.txt", "")
	write(t, sb, sb.Paths().Output+"/out.txt", "deliverable\n")
	r := tools.Builtin(tools.Options{})
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"whole file", map[string]any{"path": "notes.txt"}, "one\ntwo\nthree\nfour\nfive"},
		{"absolute path", map[string]any{"path": "/workspace/notes.txt"}, "one\ntwo\nthree\nfour\nfive"},
		{"run directory", map[string]any{"path": sb.Paths().Output + "/out.txt"}, "deliverable\n"},
		{"offset", map[string]any{"path": "notes.txt", "offset": 4}, "four\nfive"},
		{"offset and limit", map[string]any{"path": "notes.txt", "offset": 2, "limit": 2}, "two\nthree\n"},
		{"limit past the end", map[string]any{"path": "notes.txt", "offset": 5, "limit": 10}, "five"},
		{"last line", map[string]any{"path": "notes.txt", "offset": 5}, "five"},
		{"empty file", map[string]any{"path": "empty.txt"}, "(the file is empty)"},
	}
	for _, tc := range cases {
		res := call(context.Background(), t, r, sb, tools.ReadFileName, tc.args)
		wantCompleted(t, res)
		if res.Output != tc.want {
			t.Errorf("%s: Output = %q, want %q", tc.name, res.Output, tc.want)
		}
	}
}

func TestReadFileTruncates(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	var sb10 strings.Builder
	for i := 1; i <= 10; i++ {
		sb10.WriteString("line " + strconv.Itoa(i) + "\n") // 7 or 8 bytes each
	}
	write(t, sb, "ten.txt", sb10.String())
	write(t, sb, "long.txt", strings.Repeat("x", 100)+"\nshort\n")
	write(t, sb, "utf8.txt", strings.Repeat("é", 20)) // 40 bytes, no newline
	r := tools.Builtin(tools.Options{MaxReadBytes: 30})
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"at a line end", map[string]any{"path": "ten.txt"},
			"line 1\nline 2\nline 3\nline 4\n[truncated: showing lines 1-4; the file continues, call read_file with offset=5 to read more]"},
		{"continued", map[string]any{"path": "ten.txt", "offset": 5},
			"line 5\nline 6\nline 7\nline 8\n[truncated: showing lines 5-8; the file continues, call read_file with offset=9 to read more]"},
		{"rest", map[string]any{"path": "ten.txt", "offset": 9}, "line 9\nline 10\n"},
		{"limit within the cap", map[string]any{"path": "ten.txt", "offset": 3, "limit": 2}, "line 3\nline 4\n"},
		{"one long line", map[string]any{"path": "long.txt"},
			strings.Repeat("x", 30) + "\n[truncated: line 1 alone is longer than 30 bytes; read it with the shell tool (for example: cut -c or head -c)]"},
		{"characters kept whole", map[string]any{"path": "utf8.txt"},
			strings.Repeat("é", 15) + "\n[truncated: line 1 alone is longer than 30 bytes; read it with the shell tool (for example: cut -c or head -c)]"},
	}
	for _, tc := range cases {
		res := call(context.Background(), t, r, sb, tools.ReadFileName, tc.args)
		wantCompleted(t, res)
		if res.Output != tc.want {
			t.Errorf("%s: Output =\n%q\nwant\n%q", tc.name, res.Output, tc.want)
		}
	}
}

func TestReadFileErrors(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	write(t, sb, "three.txt", "a\nb\nc\n")
	write(t, sb, "dir/inner.txt", "x")
	write(t, sb, "blob.bin", "PK\x03\x04\x00\x00binary")
	r := tools.Builtin(tools.Options{})
	cases := []struct {
		name string
		args map[string]any
		code string
		want string
	}{
		{"not found", map[string]any{"path": "missing.txt"}, events.ToolErrToolError,
			"read_file /workspace/missing.txt: no such file or directory"},
		{"outside", map[string]any{"path": "/etc/passwd"}, events.ToolErrToolError,
			"read_file /etc/passwd: the path is outside the sandbox"},
		{"escape", map[string]any{"path": "../../etc/passwd"}, events.ToolErrToolError, "outside the sandbox"},
		{"directory", map[string]any{"path": "dir"}, events.ToolErrToolError, "read_file /workspace/dir: "},
		{"binary", map[string]any{"path": "blob.bin"}, events.ToolErrToolError, "the file is binary"},
		{"offset past the end", map[string]any{"path": "three.txt", "offset": 4}, events.ToolErrToolError,
			"offset 4 is past the end of the file (3 lines)"},
	}
	for _, tc := range cases {
		res := call(context.Background(), t, r, sb, tools.ReadFileName, tc.args)
		wantError(t, res, tc.code)
		if !strings.Contains(res.Output, tc.want) {
			t.Errorf("%s: %q does not contain %q", tc.name, res.Output, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantError(t, call(ctx, t, r, sb, tools.ReadFileName, map[string]any{"path": "three.txt"}), events.ToolErrCancelled)
}

// JSON Schema counts 2.0 as an integer; the tool must accept what passed.
func TestReadFileIntegralFloats(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	write(t, sb, "n.txt", "1\n2\n3\n")
	tool, args, fail := tools.Builtin(tools.Options{}).Prepare(tools.ReadFileName, `{"path": "n.txt", "offset": 2.0, "limit": 1.0}`)
	if fail != nil {
		t.Fatal(fail.Output)
	}
	res := tool.Run(context.Background(), tools.Call{Name: tools.ReadFileName, Arguments: args, Sandbox: sb})
	wantCompleted(t, res)
	if res.Output != "2\n" {
		t.Errorf("Output = %q", res.Output)
	}
}
