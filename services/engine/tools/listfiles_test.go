package tools_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

func TestListFiles(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	for _, p := range []string{"README.md", "src/main.go", "src/pkg/a.go", "src/pkg/deep/b.go", "docs/x.md"} {
		write(t, sb, p, "x")
	}
	r := tools.Builtin(tools.Options{})
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"defaults", map[string]any{},
			"README.md\ndocs/\ndocs/x.md\nsrc/\nsrc/main.go\nsrc/pkg/"},
		{"depth 1", map[string]any{"depth": 1}, "README.md\ndocs/\nsrc/"},
		{"subdirectory", map[string]any{"path": "src", "depth": 5}, "main.go\npkg/\npkg/a.go\npkg/deep/\npkg/deep/b.go"},
		{"absolute", map[string]any{"path": "/workspace/src/pkg/"}, "a.go\ndeep/\ndeep/b.go"},
		{"empty", map[string]any{"path": sb.Paths().Output}, sb.Paths().Output + " is empty"},
	}
	for _, tc := range cases {
		res := call(context.Background(), t, r, sb, tools.ListFilesName, tc.args)
		wantCompleted(t, res)
		if res.Output != tc.want {
			t.Errorf("%s: Output =\n%s\nwant\n%s", tc.name, res.Output, tc.want)
		}
	}
}

func TestListFilesCap(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	for i := range 7 {
		write(t, sb, "f"+strconv.Itoa(i), "x")
	}
	res := call(context.Background(), t, tools.Builtin(tools.Options{MaxListEntries: 5}), sb, tools.ListFilesName, map[string]any{})
	wantCompleted(t, res)
	want := "f0\nf1\nf2\nf3\nf4\n[... 2 more entries not shown; list a subdirectory or use a smaller depth]"
	if res.Output != want {
		t.Errorf("Output =\n%s\nwant\n%s", res.Output, want)
	}
}

// TestListFilesBeyondTheSandboxsBound: a directory with more entries than
// a sandbox lists (compute.MaxListed) is shown in part, saying that at
// least the rest were left out.
func TestListFilesBeyondTheSandboxsBound(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	cmd := fmt.Sprintf("seq 1 %d | xargs touch", compute.MaxListed+3)
	if res, err := sb.Exec(t.Context(), compute.ExecRequest{Command: cmd, Timeout: time.Minute}); err != nil || res.ExitCode != 0 {
		t.Fatalf("%s: %+v %v", cmd, res, err)
	}
	res := call(context.Background(), t, tools.Builtin(tools.Options{MaxListEntries: 5}), sb, tools.ListFilesName,
		map[string]any{"depth": 1})
	wantCompleted(t, res)
	want := fmt.Sprintf("\n[... at least %d more entries not shown; list a subdirectory or use a smaller depth]",
		compute.MaxListed-5)
	if lines := strings.Count(res.Output, "\n"); lines != 5 || !strings.HasSuffix(res.Output, want) {
		t.Errorf("Output =\n%s\nwant five entries and %q", res.Output, want)
	}
}

func TestListFilesErrors(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	write(t, sb, "file.txt", "x")
	r := tools.Builtin(tools.Options{})
	for p, want := range map[string]string{
		"missing":  "list_files /workspace/missing: no such file or directory",
		"/etc":     "list_files /etc: the path is outside the sandbox",
		"file.txt": "list_files /workspace/file.txt: ",
	} {
		res := call(context.Background(), t, r, sb, tools.ListFilesName, map[string]any{"path": p})
		wantError(t, res, events.ToolErrToolError)
		if !strings.Contains(res.Output, want) {
			t.Errorf("%s: %q does not contain %q", p, res.Output, want)
		}
	}
}
