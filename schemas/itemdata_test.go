package schemas_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/events"
)

// TestItemDataDefsMatchGoTypes checks the $defs that describe items' data
// against the Go types the engine writes (events/itemdata.go).
func TestItemDataDefsMatchGoTypes(t *testing.T) {
	t.Parallel()
	for def, rt := range map[string]reflect.Type{
		"mcpCall": reflect.TypeFor[events.MCPCall](), "mcpResult": reflect.TypeFor[events.MCPResult](),
		"outputRef": reflect.TypeFor[events.OutputRef](),
	} {
		compareStruct(t, "events."+rt.Name(), rt, "defs.json", map[string]any{"$ref": "defs.json#/$defs/" + def})
	}
}

// TestMCPItemExamplesRoundTripTheirData decodes the data of every
// mcp_tool_call example into the Go type it holds, refusing unknown fields,
// and expects the same JSON back.
func TestMCPItemExamplesRoundTripTheirData(t *testing.T) {
	t.Parallel()
	seen := 0
	for _, name := range examples(t, "event.runtime.item.") {
		var env struct {
			Payload struct {
				ItemType events.ItemType `json:"itemType"`
				Data     json.RawMessage `json:"data"`
			} `json:"payload"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(readFile(t, example(name)), &env); err != nil {
			t.Fatal(err)
		}
		if env.Payload.ItemType != events.ItemMCPToolCall || len(env.Payload.Data) == 0 {
			continue
		}
		var v any
		switch events.Type(env.Type) {
		case events.ItemStarted:
			v = &events.ToolCallData{}
		case events.ItemCompleted:
			v = &events.ToolResultData{}
		default:
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(env.Payload.Data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Errorf("%s: data: %v", name, err)
			continue
		}
		checkSameJSON(t, name, env.Payload.Data, mustMarshal(t, v))
		seen++
	}
	if seen < 2 {
		t.Errorf("%d mcp_tool_call examples with data, want a start and a completion", seen)
	}
}
