package tools_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

func TestBuiltinSpecs(t *testing.T) {
	t.Parallel()
	r := tools.Builtin(tools.Options{})
	want := map[string]struct {
		item     events.ItemType
		required []string
	}{
		tools.ShellName:        {events.ItemCommandExecution, []string{"command"}},
		tools.ReadFileName:     {events.ItemToolCall, []string{"path"}},
		tools.ReadFilePartName: {events.ItemToolCall, []string{"path"}},
		tools.WriteFileName:    {events.ItemFileChange, []string{"path", "content"}},
		tools.ListFilesName:    {events.ItemToolCall, nil},
		tools.AskUserName:      {events.ItemClarificationRequest, []string{"question"}},
	}
	if got := r.Names(); len(got) != len(want) {
		t.Fatalf("Names() = %v", got)
	}
	for name, w := range want {
		tool, ok := r.Get(name)
		if !ok {
			t.Errorf("%s is not registered", name)
			continue
		}
		if tool.ItemType() != w.item {
			t.Errorf("%s: ItemType = %s, want %s", name, tool.ItemType(), w.item)
		}
		spec := tool.Spec()
		if len(spec.Description) < 40 {
			t.Errorf("%s: description too thin: %q", name, spec.Description)
		}
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema must be an object with additionalProperties false: %s", name, spec.Parameters)
		}
		if !slices.Equal(schema.Required, w.required) {
			t.Errorf("%s: required = %v, want %v", name, schema.Required, w.required)
		}
		for _, req := range schema.Required {
			if _, ok := schema.Properties[req]; !ok {
				t.Errorf("%s: required %q is not a property", name, req)
			}
		}
	}
}

func TestBuiltinPanicsOnInvalidOptions(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("Builtin accepted a negative MaxOutputBytes")
		}
	}()
	tools.Builtin(tools.Options{MaxOutputBytes: -1})
}

func TestAskUser(t *testing.T) {
	t.Parallel()
	r := tools.Builtin(tools.Options{})
	res := call(context.Background(), t, r, nil, tools.AskUserName, map[string]any{"question": "  Which branch?\n"})
	if res.Question != "Which branch?" || res.ErrorCode != "" {
		t.Errorf("got %+v", res)
	}
	res = call(context.Background(), t, r, nil, tools.AskUserName, map[string]any{"question": "   "})
	wantError(t, res, events.ToolErrInvalidArguments)
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	if err := (tools.Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	err := (tools.Options{ShellTimeout: -1, MaxReadBytes: -1, MaxListEntries: -1}).Validate()
	for _, w := range []string{"ShellTimeout", "MaxReadBytes", "MaxListEntries"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate() = %v, want it to name %s", err, w)
		}
	}
}
