package tools_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

func TestPrepareInvalidArguments(t *testing.T) {
	t.Parallel()
	r := tools.Builtin(tools.Options{})
	cases := []struct {
		name, tool, args string
		want             []string // substrings of the message, in any order
	}{
		{"missing value", "shell", `{"command": }`,
			[]string{`tool "shell" are not valid JSON`, "invalid character '}'", "line 1, column 13", `near "{\"command\": ⟨here⟩}"`}},
		{"position on a later line", "shell", "{\n  \"command\": \"ls\",\n  \"cwd\": tru\n}",
			[]string{"invalid character '\\n' in literal true", "line 3, column 13"}},
		{"single quotes", "read_file", `{'path': 'a'}`,
			[]string{"looking for beginning of object key string", "line 1, column 2"}},
		{"truncated", "shell", `{"command": "ls"`,
			[]string{"ends too early", "line 1, column 17", "byte offset 16"}},
		{"trailing text", "shell", `{"command": "ls"} {"x": 1}`,
			[]string{"unexpected text after the JSON value", "column 19"}},
		{"wrong type", "shell", `{"command": 42}`,
			[]string{`do not match its parameter schema`, `at "/command": got number, want string`, `"required":["command"]`}},
		{"integer expected", "shell", `{"command": "ls", "timeoutSeconds": 1.5}`,
			[]string{`at "/timeoutSeconds": got number, want integer`}},
		{"out of range", "shell", `{"command": "ls", "timeoutSeconds": 3601}`,
			[]string{`at "/timeoutSeconds"`, "3600"}},
		{"missing required", "shell", `{"cwd": "/workspace"}`,
			[]string{`at "" (the arguments object): missing property 'command'`}},
		{"two problems", "write_file", `{"path": 1}`,
			[]string{`missing property 'content'`, `at "/path": got number, want string`}},
		{"extra property", "read_file", `{"path": "a", "encoding": "utf8"}`,
			[]string{`additional properties 'encoding' not allowed`}},
		{"not an object", "list_files", `["."]`,
			[]string{`at "" (the arguments object): got array, want object`}},
		{"null", "ask_user", `null`,
			[]string{`got null, want object`}},
		{"empty means {} and is checked", "ask_user", ``,
			[]string{`missing property 'question'`}},
		{"pointer escaping", "shell", `{"command": "ls", "a/b~c": 1}`,
			[]string{`'a/b~c'`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tool, args, res := r.Prepare(tc.tool, tc.args)
			if res == nil {
				t.Fatalf("Prepare accepted %s", tc.args)
			}
			if tool != nil || args != nil {
				t.Errorf("Prepare returned a tool or arguments with an error")
			}
			if res.ErrorCode != events.ToolErrInvalidArguments {
				t.Errorf("ErrorCode = %q", res.ErrorCode)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("message does not contain %q:\n%s", w, res.Output)
				}
			}
		})
	}
}

func TestPrepareUnknownTool(t *testing.T) {
	t.Parallel()
	r := tools.Builtin(tools.Options{})
	tool, args, res := r.Prepare("run_shell", `{"command": "ls"}`)
	if res == nil || tool != nil || args != nil {
		t.Fatalf("Prepare(run_shell) = %v, %s, %v", tool, args, res)
	}
	want := `unknown tool "run_shell"; available tools: ask_user, list_files, read_file, read_file_part, shell, write_file`
	if res.ErrorCode != events.ToolErrUnknownTool || res.Output != want {
		t.Errorf("got %q %q", res.ErrorCode, res.Output)
	}
}

func TestPrepareValidArguments(t *testing.T) {
	t.Parallel()
	r := tools.Builtin(tools.Options{})
	cases := []struct{ tool, args, want string }{
		{"shell", `{"command": "ls", "timeoutSeconds": 10}`, `{"command": "ls", "timeoutSeconds": 10}`},
		{"shell", `{"command": "ls", "timeoutSeconds": 10.0}`, `{"command": "ls", "timeoutSeconds": 10.0}`},
		{"list_files", ``, `{}`},
		{"list_files", " \n\t", `{}`},
		{"list_files", ` {"depth": 5} `, ` {"depth": 5} `},
	}
	for _, tc := range cases {
		tool, args, res := r.Prepare(tc.tool, tc.args)
		if res != nil {
			t.Errorf("Prepare(%s, %q): %s", tc.tool, tc.args, res.Output)
			continue
		}
		if tool.Spec().Name != tc.tool || string(args) != tc.want {
			t.Errorf("Prepare(%s, %q) = %s, %q", tc.tool, tc.args, tool.Spec().Name, args)
		}
	}
}
