package tools_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

func TestReadFilePartRanges(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	content := numbered(7000) // about 120 KB
	n := len(content)
	sum := sha(content)
	write(t, sb, sb.Paths().Output+"/tool-outputs/c1.txt", content)
	write(t, sb, "empty.txt", "")
	hdr := func(from, to int, tail string) string {
		return fmt.Sprintf("bytes %d-%d of %d (sha256 %s); %s\n", from, to, n, sum, tail)
	}
	next := func(o int) string { return "the next part starts at offset " + strconv.Itoa(o) }
	r := tools.Builtin(tools.Options{})
	path := sb.Paths().Output + "/tool-outputs/c1.txt"
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"start", map[string]any{"path": path, "length": 10}, hdr(0, 9, next(10)) + content[:10]},
		{"default length", map[string]any{"path": path}, hdr(0, 16383, next(16384)) + content[:16384]},
		{"middle", map[string]any{"path": path, "offset": 50000, "length": 100},
			hdr(50000, 50099, next(50100)) + content[50000:50100]},
		{"end", map[string]any{"path": path, "offset": n - 10}, hdr(n-10, n-1, "end of file") + content[n-10:]},
		{"largest length", map[string]any{"path": path, "offset": n - 70000, "length": 65536},
			hdr(n-70000, n-70000+65535, next(n-70000+65536)) + content[n-70000:n-70000+65536]},
		{"relative path", map[string]any{"path": "empty.txt"},
			"the file is empty (0 bytes, sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855)"},
	}
	for _, tc := range cases {
		res := call(context.Background(), t, r, sb, tools.ReadFilePartName, tc.args)
		wantCompleted(t, res)
		if res.Output != tc.want {
			t.Errorf("%s: Output =\n%.300q\nwant\n%.300q", tc.name, res.Output, tc.want)
		}
	}
}

func TestReadFilePartUTF8(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	const text = "aé€😀b" // characters of 1, 2, 3, 4 and 1 bytes
	write(t, sb, "u.txt", text)
	sum := sha(text)
	r := tools.Builtin(tools.Options{})
	cases := []struct {
		offset, length int
		want           string
	}{
		{2, 1, "bytes 1-2 of 11 (sha256 " + sum + "); the next part starts at offset 3\né"},  // start moves back
		{0, 4, "bytes 0-2 of 11 (sha256 " + sum + "); the next part starts at offset 3\naé"}, // end moves back
		{3, 1, "bytes 3-5 of 11 (sha256 " + sum + "); the next part starts at offset 6\n€"},  // one whole character
		{7, 100, "bytes 6-10 of 11 (sha256 " + sum + "); end of file\n😀b"},
	}
	for _, tc := range cases {
		res := call(context.Background(), t, r, sb, tools.ReadFilePartName,
			map[string]any{"path": "u.txt", "offset": tc.offset, "length": tc.length})
		wantCompleted(t, res)
		if res.Output != tc.want {
			t.Errorf("offset %d length %d: Output = %q, want %q", tc.offset, tc.length, res.Output, tc.want)
		}
	}
}

// Following "the next part starts at offset" reads every byte exactly once,
// whatever characters the parts split.
func TestReadFilePartTiles(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	content := strings.Repeat("ab€😀\né", 50)
	write(t, sb, "tiles.txt", content)
	r := tools.Builtin(tools.Options{})
	nextRe := regexp.MustCompile(`next part starts at offset (\d+)\n`)
	var got strings.Builder
	for offset, calls := 0, 0; ; calls++ {
		if calls > len(content) {
			t.Fatal("parts do not advance")
		}
		res := call(context.Background(), t, r, sb, tools.ReadFilePartName,
			map[string]any{"path": "tiles.txt", "offset": offset, "length": 5})
		wantCompleted(t, res)
		header, body, _ := strings.Cut(res.Output, "\n")
		got.WriteString(body)
		m := nextRe.FindStringSubmatch(header + "\n")
		if m == nil {
			break
		}
		offset, _ = strconv.Atoi(m[1])
	}
	if got.String() != content {
		t.Errorf("parts joined =\n%q\nwant\n%q", got.String(), content)
	}
}

func TestReadFilePartErrors(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	write(t, sb, "ten.txt", "0123456789")
	write(t, sb, "blob.bin", "text then \xff\xfe\x00\x01 binary")
	r := tools.Builtin(tools.Options{})
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"past the end", map[string]any{"path": "ten.txt", "offset": 10},
			"read_file_part /workspace/ten.txt: offset 10 is past the end of the file (10 bytes)"},
		{"far past the end", map[string]any{"path": "ten.txt", "offset": 1000}, "offset 1000 is past the end"},
		{"not found", map[string]any{"path": "missing.txt"}, "read_file_part /workspace/missing.txt: no such file or directory"},
		{"outside", map[string]any{"path": "/etc/passwd"}, "outside the sandbox"},
		{"binary", map[string]any{"path": "blob.bin", "offset": 5}, "bytes 5-20 are not UTF-8 text (binary data)"},
	}
	for _, tc := range cases {
		res := call(context.Background(), t, r, sb, tools.ReadFilePartName, tc.args)
		wantError(t, res, events.ToolErrToolError)
		if !strings.Contains(res.Output, tc.want) {
			t.Errorf("%s: %q does not contain %q", tc.name, res.Output, tc.want)
		}
	}
	if res := call(context.Background(), t, r, sb, tools.ReadFilePartName, map[string]any{"path": "blob.bin", "length": 10}); res.Output != "bytes 0-9 of 21 (sha256 "+sha("text then \xff\xfe\x00\x01 binary")+"); the next part starts at offset 10\ntext then " {
		t.Errorf("text before binary bytes: %q", res.Output)
	}
	for _, bad := range []string{`{"path": "ten.txt", "length": 0}`, `{"path": "ten.txt", "length": 65537}`,
		`{"path": "ten.txt", "offset": -1}`, `{"path": ""}`, `{"offset": 1}`} {
		if _, _, fail := r.Prepare(tools.ReadFilePartName, bad); fail == nil || fail.ErrorCode != events.ToolErrInvalidArguments {
			t.Errorf("Prepare(%s) accepted", bad)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantError(t, call(ctx, t, r, sb, tools.ReadFilePartName, map[string]any{"path": "ten.txt"}), events.ToolErrCancelled)
}
