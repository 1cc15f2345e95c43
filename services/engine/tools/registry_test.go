package tools_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// stub is a tool with a given name and schema that echoes its arguments.
type stub struct {
	name   string
	params string
}

func (s stub) Spec() model.ToolSpec {
	return model.ToolSpec{Name: s.name, Description: "test tool " + s.name, Parameters: json.RawMessage(s.params)}
}
func (stub) ItemType() events.ItemType { return events.ItemToolCall }
func (stub) Run(_ context.Context, c tools.Call) tools.Result {
	return tools.Result{Output: string(c.Arguments)}
}

const objectSchema = `{"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": false}`

func TestNewRegistryRejectsBadTools(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		tools []tools.Tool
		want  []string // substrings of the error
	}{
		{"duplicate", []tools.Tool{stub{"a", objectSchema}, stub{"a", objectSchema}}, []string{`"a" is registered twice`}},
		{"nil tool", []tools.Tool{nil}, []string{"tool 0 is nil"}},
		{"empty name", []tools.Tool{stub{"", objectSchema}}, []string{`name ""`}},
		{"name with space", []tools.Tool{stub{"read file", objectSchema}}, []string{`name "read file"`}},
		{"no schema", []tools.Tool{stub{"a", ""}}, []string{`"a": parameters: no schema`}},
		{"not JSON", []tools.Tool{stub{"a", `{"type": "object",`}}, []string{`"a": parameters: not JSON`}},
		{"not an object schema", []tools.Tool{stub{"a", `{"type": "string"}`}}, []string{`"type": "object"`}},
		{"schema is an array", []tools.Tool{stub{"a", `[]`}}, []string{`"type": "object"`}},
		{"bad keyword value", []tools.Tool{stub{"a", `{"type": "object", "required": "x"}`}}, []string{"invalid JSON Schema"}},
		{"bad pattern", []tools.Tool{stub{"a", `{"type": "object", "properties": {"x": {"pattern": "("}}}`}}, []string{"invalid JSON Schema"}},
		{"external ref", []tools.Tool{stub{"a", `{"type": "object", "properties": {"x": {"$ref": "file:///etc/passwd"}}}`}}, []string{"external schema references are not allowed"}},
		{"all problems at once", []tools.Tool{stub{"a", `{}`}, stub{"b c", objectSchema}, stub{"d", objectSchema}, stub{"d", objectSchema}},
			[]string{`"a"`, `"b c"`, `"d" is registered twice`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := tools.NewRegistry(tc.tools...)
			if err == nil {
				t.Fatalf("NewRegistry succeeded (%v)", r.Names())
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestRegistryGetNamesSpecs(t *testing.T) {
	t.Parallel()
	r, err := tools.NewRegistry(stub{"zeta", objectSchema}, stub{"alpha", objectSchema}, stub{"mid", objectSchema})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Names(), []string{"alpha", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if tool, ok := r.Get("mid"); !ok || tool.Spec().Name != "mid" {
		t.Errorf("Get(mid) = %v, %v", tool, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}
	specs, err := r.Specs([]string{"zeta", "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || specs[0].Name != "zeta" || specs[1].Name != "alpha" {
		t.Errorf("Specs order: %+v", specs)
	}
	if !json.Valid(specs[0].Parameters) || specs[0].Description == "" {
		t.Errorf("spec content: %+v", specs[0])
	}
	specs[0].Parameters[0] = 'X' // callers cannot change the registry's copy
	again, _ := r.Specs([]string{"zeta"})
	if again[0].Parameters[0] != '{' {
		t.Error("Specs returned the registry's own schema bytes")
	}
	if specs, err := r.Specs(nil); err != nil || len(specs) != 0 {
		t.Errorf("Specs(nil) = %v, %v", specs, err)
	}
}

func TestSpecsUnknownAndRepeatedNames(t *testing.T) {
	t.Parallel()
	r, err := tools.NewRegistry(stub{"a", objectSchema}, stub{"b", objectSchema})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Specs([]string{"a", "nope", "b", "gone"})
	if err == nil || !strings.Contains(err.Error(), `"nope", "gone"`) || !strings.Contains(err.Error(), "registered: a, b") {
		t.Errorf("unknown names: err = %v", err)
	}
	_, err = r.Specs([]string{"a", "b", "a"})
	if err == nil || !strings.Contains(err.Error(), `more than once: "a"`) {
		t.Errorf("repeated name: err = %v", err)
	}
}
