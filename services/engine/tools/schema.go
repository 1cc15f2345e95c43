package tools

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// errNoLoad refuses every external $ref: a tool schema must be self-contained,
// and compiling it must never touch the file system or the network.
var errNoLoad = errors.New("external schema references are not allowed")

type noLoader struct{}

func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("load %s: %w", url, errNoLoad) }

// compileSchema compiles a tool's parameter schema. The schema must be a JSON
// object whose "type" is "object": arguments are always a JSON object.
func compileSchema(spec model.ToolSpec) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(spec.Parameters)) == 0 {
		return nil, errors.New("parameters: no schema")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(spec.Parameters))
	if err != nil {
		return nil, fmt.Errorf("parameters: not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok || obj["type"] != "object" {
		return nil, errors.New(`parameters: must be a schema with "type": "object"`)
	}
	url := "urn:xbot:tool:" + spec.Name
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("parameters: %w", err)
	}
	schema, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("parameters: invalid JSON Schema: %w", err)
	}
	return schema, nil
}

// schemaViolations lists each leaf violation as "at <pointer>: <message>",
// sorted: the validator visits properties in map order.
func schemaViolations(err *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		msg := e.ErrorKind.KeywordPath()
		text := strings.Join(msg, "/")
		if unit := e.BasicOutput(); unit.Error != nil {
			text = unit.Error.String()
		}
		out = append(out, fmt.Sprintf("at %s: %s", pointer(e.InstanceLocation), text))
	}
	walk(err)
	slices.Sort(out)
	return out
}

// pointer renders an instance location as a JSON pointer (RFC 6901), naming
// the root explicitly because "" reads as nothing to a model.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return `"" (the arguments object)`
	}
	var sb strings.Builder
	for _, t := range tokens {
		t = strings.ReplaceAll(t, "~", "~0")
		t = strings.ReplaceAll(t, "/", "~1")
		sb.WriteString("/" + t)
	}
	return `"` + sb.String() + `"`
}
