package schemas_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/schemas"
)

// TestEveryTypeIsCovered fails when a command or event type is added to the
// Go code without its payload schema, envelope dispatch and example, and when
// a schema is left behind for a type that no longer exists.
func TestEveryTypeIsCovered(t *testing.T) {
	t.Parallel()
	want := []string{schemas.DefsFile, schemas.CommandEnvelopeFile, schemas.EventEnvelopeFile, schemas.ErrorsSchemaFile, imMessageFile}
	cmdTypes := stringsOf(commands.Types())
	evtTypes := stringsOf(events.Catalog())
	for _, ct := range cmdTypes {
		want = append(want, schemas.CommandPayloadFile(ct))
	}
	for _, et := range evtTypes {
		want = append(want, schemas.EventPayloadFile(et))
	}
	sort.Strings(want)
	if got := schemas.SchemaFiles(); !slices.Equal(got, want) {
		t.Errorf("schema files:\n got %q\nwant %q", got, want)
	}
	checkDispatch(t, schemas.CommandEnvelopeFile, cmdTypes, schemas.CommandPayloadFile)
	checkDispatch(t, schemas.EventEnvelopeFile, evtTypes, schemas.EventPayloadFile)
	checkExamples(t, "command.", cmdTypes)
	checkExamples(t, "event.", evtTypes)
}

// checkDispatch checks that the envelope sends each type to its payload schema.
func checkDispatch(t *testing.T, file string, types []string, payloadFile func(string) string) {
	t.Helper()
	doc := readJSON(t, file).(map[string]any)
	got := map[string]string{}
	for _, b := range asSlice(doc["allOf"]) {
		branch := b.(map[string]any)
		typ := dig(branch, "if", "properties", "type", "const")
		ref := dig(branch, "then", "properties", "payload", "$ref")
		got[fmt.Sprint(typ)] = fmt.Sprint(ref)
	}
	for _, typ := range types {
		if got[typ] != payloadFile(typ) {
			t.Errorf("%s: type %s dispatches to %q, want %q", file, typ, got[typ], payloadFile(typ))
		}
		delete(got, typ)
	}
	for typ := range got {
		t.Errorf("%s: dispatches unknown type %s", file, typ)
	}
}

// checkExamples checks that each type has an example that holds it.
func checkExamples(t *testing.T, prefix string, types []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, name := range examples(t, prefix) {
		var head struct{ Type string }
		if err := json.Unmarshal(readFile(t, example(name)), &head); err != nil {
			t.Fatal(err)
		}
		seen[head.Type] = true
	}
	for _, typ := range types {
		if !seen[typ] {
			t.Errorf("no example of %s (add examples/%s%s.json)", typ, prefix, typ)
		}
	}
}

// TestExamplesUseEveryField checks that the examples of each type, taken
// together, set every field of the Go type, so the round trip exercises all.
func TestExamplesUseEveryField(t *testing.T) {
	t.Parallel()
	check := func(prefix string, envType reflect.Type, payloadType func(string) reflect.Type) {
		used := map[string]map[string]bool{} // type → paths
		all := map[string]bool{}
		for _, name := range examples(t, prefix) {
			doc := readJSON(t, example(name)).(map[string]any)
			typ := fmt.Sprint(doc["type"])
			if used[typ] == nil {
				used[typ] = map[string]bool{}
			}
			collectPaths(doc, "", all)
			collectPaths(doc["payload"], "", used[typ])
		}
		for _, p := range goPaths(envType, "") {
			if !all[p] {
				t.Errorf("no %s example sets envelope field %s", prefix+"*", p)
			}
		}
		for typ, paths := range used {
			for _, p := range goPaths(payloadType(typ), "") {
				if !paths[p] {
					t.Errorf("no %s example sets payload field %s", typ, p)
				}
			}
		}
	}
	check("command.", reflect.TypeFor[commands.Envelope](), func(typ string) reflect.Type {
		p, err := commands.NewPayload(commands.Type(typ))
		if err != nil {
			t.Fatal(err)
		}
		return reflect.TypeOf(p).Elem()
	})
	check("event.", reflect.TypeFor[events.Envelope](), func(typ string) reflect.Type {
		p, err := events.NewPayload(events.Type(typ))
		if err != nil {
			t.Fatal(err)
		}
		return reflect.TypeOf(p).Elem()
	})
}

func collectPaths(v any, prefix string, into map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, sub := range m {
		into[prefix+k] = true
		collectPaths(sub, prefix+k+".", into)
	}
}

// goPaths lists the dotted JSON paths of a struct's fields, nested structs included.
func goPaths(rt reflect.Type, prefix string) []string {
	var out []string
	for name, f := range jsonFields(rt) {
		out = append(out, prefix+name)
		if f.typ.Kind() == reflect.Struct {
			out = append(out, goPaths(f.typ, prefix+name+".")...)
		}
	}
	return out
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func stringsOf[T ~string](in []T) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}
