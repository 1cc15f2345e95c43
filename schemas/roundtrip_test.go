package schemas_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// TestCommandExamplesRoundTrip decodes every command example with the Go
// decoder (which validates it), re-encodes it and expects the same JSON: a
// field the Go types do not know, or one they add, shows up as a difference.
func TestCommandExamplesRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range examples(t, "command.") {
		data := readFile(t, example(name))
		env, p, err := commands.Decode(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want, err := commands.NewPayload(env.Type); err != nil || reflect.TypeOf(p) != reflect.TypeOf(want) {
			t.Errorf("%s: payload decoded as %T for type %s", name, p, env.Type)
		}
		if !strings.HasPrefix(name, "command."+string(env.Type)+".") {
			t.Errorf("%s: holds a %s command; name it command.%s[.variant].json", name, env.Type, env.Type)
		}
		env.Payload = mustMarshal(t, p)
		checkSameJSON(t, name, data, mustMarshal(t, env))
	}
}

// TestEventExamplesRoundTrip does the same for events, and folds each one
// onto a run in a state that allows it.
func TestEventExamplesRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range examples(t, "event.") {
		data := readFile(t, example(name))
		env, err := events.Decode(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		p, err := env.DecodePayload()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.HasPrefix(name, "event."+string(env.Type)+".") {
			t.Errorf("%s: holds a %s event; name it event.%s[.variant].json", name, env.Type, env.Type)
		}
		env.Payload = mustMarshal(t, p)
		checkSameJSON(t, name, data, mustMarshal(t, env))
		if _, err := events.Fold(priorState(env), env); err != nil {
			t.Errorf("%s: does not fold: %v", name, err)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkSameJSON reports every difference between an example and its re-encoding.
func checkSameJSON(t *testing.T, name string, want, got []byte) {
	t.Helper()
	for _, d := range jsonDiff(decodeJSON(t, want), decodeJSON(t, got), "") {
		t.Errorf("%s: %s", name, d)
	}
}

// TestSchemasMatchGoTypes checks that every schema's properties are exactly
// the JSON fields of its Go type and its required list exactly the fields
// without omitempty, nested objects included.
func TestSchemasMatchGoTypes(t *testing.T) {
	t.Parallel()
	compareStruct(t, "commands.Envelope", reflect.TypeFor[commands.Envelope](), "command.envelope.json", nil)
	compareStruct(t, "events.Envelope", reflect.TypeFor[events.Envelope](), "event.envelope.json", nil)
	for _, ct := range commands.Types() {
		p, err := commands.NewPayload(ct)
		if err != nil {
			t.Fatal(err)
		}
		compareStruct(t, string(ct), reflect.TypeOf(p).Elem(), "command."+string(ct)+".json", nil)
	}
	for _, et := range events.Catalog() {
		p, err := events.NewPayload(et)
		if err != nil {
			t.Fatal(err)
		}
		compareStruct(t, string(et), reflect.TypeOf(p).Elem(), "event."+string(et)+".json", nil)
	}
}

func compareStruct(t *testing.T, label string, rt reflect.Type, file string, node map[string]any) {
	t.Helper()
	if node == nil {
		node, _ = readJSON(t, file).(map[string]any)
	}
	file, node = resolve(t, file, node)
	props, _ := node["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range asSlice(node["required"]) {
		required[r.(string)] = true
	}
	fields := jsonFields(rt)
	for name, f := range fields {
		sub, ok := props[name].(map[string]any)
		switch {
		case !ok:
			t.Errorf("%s: Go field %s is not a property of %s", label, name, file)
			continue
		case required[name] == f.omitempty:
			t.Errorf("%s.%s: required in schema = %v, but Go omitempty = %v", label, name, required[name], f.omitempty)
		}
		if ft := f.typ; ft.Kind() == reflect.Struct {
			compareStruct(t, label+"."+name, ft, file, sub)
		}
	}
	for name := range props {
		if _, ok := fields[name]; !ok {
			t.Errorf("%s: schema property %s has no Go field", label, name)
		}
	}
	for name := range required {
		if _, ok := props[name]; !ok {
			t.Errorf("%s: required %s is not a property", label, name)
		}
	}
}

type jsonField struct {
	typ       reflect.Type
	omitempty bool
}

// jsonFields maps the JSON names of a struct's exported fields to their types.
func jsonFields(rt reflect.Type) map[string]jsonField {
	out := map[string]jsonField{}
	for f := range rt.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		out[name] = jsonField{typ: ft, omitempty: strings.Contains(","+opts+",", ",omitempty,")}
	}
	return out
}

// resolve follows $refs (relative to file) until it reaches a schema without one.
func resolve(t *testing.T, file string, node map[string]any) (string, map[string]any) {
	t.Helper()
	for {
		ref, ok := node["$ref"].(string)
		if !ok {
			return file, node
		}
		f, ptr, _ := strings.Cut(ref, "#")
		if f != "" {
			file = f
		}
		cur := readJSON(t, file)
		for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			if seg != "" {
				cur = cur.(map[string]any)[seg]
			}
		}
		if node, ok = cur.(map[string]any); !ok {
			t.Fatalf("%s: $ref %s does not resolve to an object", file, ref)
		}
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
