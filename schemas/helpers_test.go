package schemas_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/xbot-runtime/xbot/schemas"
)

// compiled compiles every schema file once for all tests.
var compiled = sync.OnceValues(func() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for _, name := range schemas.SchemaFiles() {
		data, err := fs.ReadFile(schemas.V1(), name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := c.AddResource(schemas.SchemaID(name), doc); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	var errs []error
	for _, name := range schemas.SchemaFiles() {
		sch, err := c.Compile(schemas.SchemaID(name))
		if err != nil {
			errs = append(errs, fmt.Errorf("compile %s: %w", name, err))
			continue
		}
		out[name] = sch
	}
	return out, errors.Join(errs...)
})

func schemaFor(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	all, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	sch, ok := all[file]
	if !ok {
		t.Fatalf("no schema %s", file)
	}
	return sch
}

// envelopeFor returns the envelope schema file for an example file name.
func envelopeFor(t *testing.T, file string) string {
	t.Helper()
	switch {
	case strings.HasPrefix(file, "command."):
		return schemas.CommandEnvelopeFile
	case strings.HasPrefix(file, "event."):
		return schemas.EventEnvelopeFile
	}
	t.Fatalf("example %s is neither command.* nor event.*", file)
	return ""
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := fs.ReadFile(schemas.V1(), name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// readJSON decodes a V1 file into generic JSON values, numbers kept exact.
func readJSON(t *testing.T, name string) any {
	t.Helper()
	return decodeJSON(t, readFile(t, name))
}

func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func validate(t *testing.T, file string, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return schemaFor(t, file).Validate(inst)
}

// examples lists the valid example files whose names start with prefix.
func examples(t *testing.T, prefix string) []string {
	t.Helper()
	entries, err := fs.ReadDir(schemas.V1(), schemas.ExamplesDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), prefix) && path.Ext(e.Name()) == ".json" {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatalf("no examples %s*", prefix)
	}
	return out
}

func example(name string) string { return path.Join(schemas.ExamplesDir, name) }

// errorPaths flattens a schema validation error into the sorted, distinct
// dotted instance paths it blames; a missing required property or a bad property name is
// blamed on the property itself. (kind.PropertyNames is not used: v6.0.3
// reports it at a wrong instance location.)
func errorPaths(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var out []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		loc := e.InstanceLocation
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				out = append(out, strings.Join(append(append([]string(nil), loc...), m), "."))
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				out = append(out, strings.Join(append(append([]string(nil), loc...), p), "."))
			}
		default:
			if len(e.Causes) == 0 {
				out = append(out, strings.Join(loc, "."))
			}
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(out)
	return slices.Compact(out)
}

// jsonDiff lists the paths where two generic JSON values differ.
func jsonDiff(want, got any, at string) []string {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if !wok || !gok {
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: want %v, got %v", strings.TrimPrefix(at, "."), want, got)}
		}
		return nil
	}
	var out []string
	for k, w := range wm {
		g, ok := gm[k]
		if !ok {
			out = append(out, strings.TrimPrefix(at+"."+k, ".")+": lost on re-encode (no such Go field?)")
			continue
		}
		out = append(out, jsonDiff(w, g, at+"."+k)...)
	}
	for k := range gm {
		if _, ok := wm[k]; !ok {
			out = append(out, strings.TrimPrefix(at+"."+k, ".")+": added on re-encode (field missing from the example?)")
		}
	}
	sort.Strings(out)
	return out
}
