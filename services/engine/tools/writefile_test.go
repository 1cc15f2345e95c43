package tools_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

func TestWriteFileCreates(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	r := tools.Builtin(tools.Options{})
	res := call(context.Background(), t, r, sb, tools.WriteFileName, map[string]any{"path": "src/new/hello.txt", "content": "hello\nworld\n"})
	wantCompleted(t, res)
	fc := res.FileChange
	want := "--- /dev/null\n+++ b/src/new/hello.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n"
	if fc == nil || fc.Path != "/workspace/src/new/hello.txt" || !fc.Created || fc.Bytes != 12 || fc.Diff != want {
		t.Fatalf("FileChange = %+v\nwant diff %q", fc, want)
	}
	if res.Output != "created /workspace/src/new/hello.txt (12 bytes, 2 lines)" {
		t.Errorf("Output = %q", res.Output)
	}
	if got := read(t, sb, "src/new/hello.txt"); got != "hello\nworld\n" {
		t.Errorf("file = %q", got)
	}
}

func TestWriteFileUpdates(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	r := tools.Builtin(tools.Options{})
	write(t, sb, "main.go", "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	res := call(context.Background(), t, r, sb, tools.WriteFileName, map[string]any{
		"path": "/workspace/main.go", "content": "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}",
	})
	wantCompleted(t, res)
	want := "--- a/main.go\n+++ b/main.go\n@@ -1,5 +1,5 @@\n package main\n \n func main() {\n" +
		"-\tprintln(\"hi\")\n-}\n+\tprintln(\"hello\")\n+}\n\\ No newline at end of file\n"
	if res.FileChange.Diff != want || res.FileChange.Created {
		t.Errorf("FileChange = %+v\nwant diff:\n%s", res.FileChange, want)
	}
	if res.Output != "wrote /workspace/main.go (47 bytes, 5 lines): +2 -2 lines" {
		t.Errorf("Output = %q", res.Output)
	}
}

func TestWriteFileUnchanged(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	write(t, sb, "same.txt", "same\n")
	res := call(context.Background(), t, tools.Builtin(tools.Options{}), sb, tools.WriteFileName,
		map[string]any{"path": "same.txt", "content": "same\n"})
	wantCompleted(t, res)
	if res.FileChange.Diff != "" || res.Output != "/workspace/same.txt already had this content (5 bytes); nothing changed" {
		t.Errorf("got %+v %q", res.FileChange, res.Output)
	}
}

func TestWriteFileCreatesEmptyAndRunPaths(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	r := tools.Builtin(tools.Options{})
	res := call(context.Background(), t, r, sb, tools.WriteFileName, map[string]any{"path": "empty", "content": ""})
	wantCompleted(t, res)
	if !res.FileChange.Created || res.FileChange.Diff != "" || res.FileChange.Bytes != 0 {
		t.Errorf("empty: %+v", res.FileChange)
	}
	out := sb.Paths().Output + "/report.md"
	res = call(context.Background(), t, r, sb, tools.WriteFileName, map[string]any{"path": out, "content": "x"})
	wantCompleted(t, res)
	name := strings.TrimPrefix(out, "/")
	want := "--- /dev/null\n+++ b/" + name + "\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n"
	if res.FileChange.Diff != want {
		t.Errorf("diff = %q, want %q", res.FileChange.Diff, want)
	}
}

// The diff shows what is on disk, not what was sent.
func TestWriteFileDiffsWhatWasReadBack(t *testing.T) {
	t.Parallel()
	base := openSandbox(t)
	write(t, base, "crlf.txt", "a\n")
	sb := &faulty{Sandbox: base, readBack: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }}
	res := call(context.Background(), t, tools.Builtin(tools.Options{}), sb, tools.WriteFileName,
		map[string]any{"path": "crlf.txt", "content": "a\nb\n"})
	wantCompleted(t, res)
	want := "--- a/crlf.txt\n+++ b/crlf.txt\n@@ -1 +1,2 @@\n-a\n+a\r\n+b\r\n"
	if res.FileChange.Diff != want || res.FileChange.Bytes != 6 {
		t.Errorf("FileChange = %+v", res.FileChange)
	}
	if !strings.Contains(res.Output, "warning: the file read back (6 bytes) differs from the content sent (4 bytes)") {
		t.Errorf("Output = %q", res.Output)
	}
}

func TestWriteFileBinaryPrevious(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	write(t, sb, "data", "\x00\x01\x02")
	res := call(context.Background(), t, tools.Builtin(tools.Options{}), sb, tools.WriteFileName,
		map[string]any{"path": "data", "content": "text\n"})
	wantCompleted(t, res)
	if res.FileChange.Diff != "Binary files a/data and b/data differ\n" || res.Output != "wrote /workspace/data (5 bytes, 1 line)" {
		t.Errorf("got %+v %q", res.FileChange, res.Output)
	}
}

func TestWriteFileErrors(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	write(t, sb, "dir/x", "x")
	r := tools.Builtin(tools.Options{})
	cases := []struct {
		path, want string
	}{
		{"/etc/evil", "write_file: read the current content of /etc/evil: the path is outside the sandbox"},
		{"../../x", "outside the sandbox"},
		{"dir", "/workspace/dir"},
		{sb.Paths().Input + "/x", "write_file " + sb.Paths().Input + "/x: "},
	}
	for _, tc := range cases {
		res := call(context.Background(), t, r, sb, tools.WriteFileName, map[string]any{"path": tc.path, "content": "x"})
		wantError(t, res, events.ToolErrToolError)
		if !strings.Contains(res.Output, tc.want) {
			t.Errorf("%s: %q does not contain %q", tc.path, res.Output, tc.want)
		}
	}
	failing := &faulty{Sandbox: sb, writeErr: errors.New("disk full")}
	res := call(context.Background(), t, r, failing, tools.WriteFileName, map[string]any{"path": "a", "content": "x"})
	wantError(t, res, events.ToolErrToolError)
	if res.Output != "write_file /workspace/a: disk full" {
		t.Errorf("Output = %q", res.Output)
	}
}

func TestWriteFileCapsTheDiff(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	var before, after strings.Builder
	for i := range 40 {
		before.WriteString("line " + strconv.Itoa(i) + "\n")
		if i%10 == 5 {
			after.WriteString("changed " + strconv.Itoa(i) + "\n")
		} else {
			after.WriteString("line " + strconv.Itoa(i) + "\n")
		}
	}
	write(t, sb, "f.txt", before.String())
	res := call(context.Background(), t, tools.Builtin(tools.Options{MaxDiffBytes: 200}), sb, tools.WriteFileName,
		map[string]any{"path": "f.txt", "content": after.String()})
	wantCompleted(t, res)
	d := res.FileChange.Diff
	want := "--- a/f.txt\n+++ b/f.txt\n@@ -3,7 +3,7 @@\n line 2\n line 3\n line 4\n-line 5\n+changed 5\n line 6\n line 7\n line 8\n"
	if !strings.HasPrefix(d, want) || !strings.HasSuffix(d, " bytes shown]\n") || strings.Count(d, "@@ -") != 1 || len(d) > 200+60 {
		t.Errorf("capped diff:\n%s", d)
	}
}
