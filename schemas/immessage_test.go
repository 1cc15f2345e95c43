package schemas_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/projections/im"
)

// imMessageFile is the schema of a message of the IM view on
// xbot.im.outbox.v1; its examples are named im.message.<kind>[.<variant>].json.
const imMessageFile = "im.message.json"

// TestIMMessageSchemaMatchesGoType holds im.message.json to im.Message the
// way TestSchemasMatchGoTypes holds the envelopes to their Go types.
func TestIMMessageSchemaMatchesGoType(t *testing.T) {
	t.Parallel()
	compareStruct(t, "im.Message", reflect.TypeFor[im.Message](), imMessageFile, nil)
	// compareStruct does not descend into arrays: compare the action items too.
	items, ok := dig(readJSON(t, imMessageFile), "properties", "actions", "items").(map[string]any)
	if !ok {
		t.Fatalf("%s: properties.actions.items is not a schema", imMessageFile)
	}
	compareStruct(t, "im.Action", reflect.TypeFor[im.Action](), imMessageFile, items)
}

func TestIMMessageEnumsMatchGo(t *testing.T) {
	t.Parallel()
	doc := readJSON(t, imMessageFile)
	for _, tc := range []struct {
		path []string
		want []string
	}{
		{[]string{"properties", "kind", "enum"}, stringsOf(im.Kinds())},
		{[]string{"$defs", "status", "properties", "event", "enum"}, stringsOf(im.StatusEvents())},
	} {
		var got []string
		for _, v := range asSlice(dig(doc, tc.path...)) {
			got = append(got, v.(string))
		}
		if !sameSet(got, tc.want) {
			t.Errorf("%s %s: %q, Go has %q", imMessageFile, strings.Join(tc.path, "."), got, tc.want)
		}
	}
}

// TestIMMessageExamples validates every im.message example, round-trips it
// through im.Message and checks that, together, they set every Go field.
func TestIMMessageExamples(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	for _, name := range examples(t, "im.message.") {
		data := readFile(t, example(name))
		if err := validate(t, imMessageFile, data); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		var m im.Message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.HasPrefix(name, "im.message."+string(m.Kind)+".") {
			t.Errorf("%s: holds a %s message; name it im.message.%s[.variant].json", name, m.Kind, m.Kind)
		}
		checkSameJSON(t, name, data, mustMarshal(t, m))
		doc := decodeJSON(t, data).(map[string]any)
		collectPaths(doc, "", used)
		for _, a := range asSlice(doc["actions"]) {
			collectPaths(a, "actions.", used)
		}
	}
	want := append(goPaths(reflect.TypeFor[im.Message](), ""), goPaths(reflect.TypeFor[im.Action](), "actions.")...)
	for _, p := range want {
		if !used[p] {
			t.Errorf("no im.message example sets field %s", p)
		}
	}
}

// TestIMMessageSchemaRejects breaks one rule of the schema at a time.
func TestIMMessageSchemaRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		example, field string
		value          any // nil deletes the field
	}{
		{"im.message.awaiting_approval.json", "actions", nil},
		{"im.message.awaiting_approval.json", "itemId", nil},
		{"im.message.awaiting_approval.json", "request", nil},
		{"im.message.awaiting_approval.json", "request.approvalId", "apr_x"},
		{"im.message.status.run.failed.json", "status", nil},
		{"im.message.status.run.failed.json", "status.errorCode", nil},
		{"im.message.status.run.paused.json", "status.pauseReason", nil},
		{"im.message.status.approval.decision_submitted.json", "status.actor", nil},
		{"im.message.status.follow_up.json", "status.createdRunId", nil},
		{"im.message.assistant_message.json", "text", ""},
		{"im.message.assistant_message.json", "kind", "reasoning"},
		{"im.message.assistant_message.json", "id", "evt_01KWBRNQ38HGE6WRWXJQ8BT1JM"},
	} {
		doc := readJSON(t, example(tc.example))
		keys := strings.Split(tc.field, ".")
		parent := dig(doc, keys[:len(keys)-1]...).(map[string]any)
		if tc.value == nil {
			delete(parent, keys[len(keys)-1])
		} else {
			parent[keys[len(keys)-1]] = tc.value
		}
		if err := validate(t, imMessageFile, mustMarshal(t, doc)); err == nil {
			t.Errorf("%s with %s = %v: the schema accepts it", tc.example, tc.field, tc.value)
		}
	}
}
