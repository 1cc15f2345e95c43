package im_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/im"
	"github.com/xbot-runtime/xbot/schemas"
)

// imMessageFile is the schema of im.Message in schemas.V1().
const imMessageFile = "im.message.json"

// messageSchema compiles im.message.json (and the files it refers to) once.
var messageSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for _, name := range schemas.SchemaFiles() {
		data, err := fs.ReadFile(schemas.V1(), name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		if err := c.AddResource(schemas.SchemaID(name), doc); err != nil {
			return nil, err
		}
	}
	return c.Compile(schemas.SchemaID(imMessageFile))
})

// checkValid validates a message, as published, against im.message.json.
func checkValid(t *testing.T, m im.Message) {
	t.Helper()
	sch, err := messageSchema()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("message %s (run %s seq %d) is not valid: %v\n%s", m.ID, m.RunID, m.Seq, err, data)
	}
}

// TestEventExamplesFlattenToValidMessages flattens every golden event example
// of the protocol (written independently of this package) and validates what
// comes out.
func TestEventExamplesFlattenToValidMessages(t *testing.T) {
	t.Parallel()
	kinds := map[im.Kind]bool{}
	for _, name := range exampleFiles(t, "event.") {
		env, err := events.Decode(readExample(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, ok, err := im.Flatten(env)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if ok {
			kinds[m.Kind] = true
			checkValid(t, m)
		}
	}
	for _, k := range im.Kinds() {
		if !kinds[k] {
			t.Errorf("no event example flattens to a %s message", k)
		}
	}
}

// TestSchemaExamplesAreRealMessages checks that every im.message example in
// schemas/v1/examples is exactly what Flatten makes of some event: of an
// event example, or of a golden case here.
func TestSchemaExamplesAreRealMessages(t *testing.T) {
	t.Parallel()
	made := map[string]bool{}
	keep := func(m im.Message) {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		made[string(data)] = true
	}
	for _, build := range cases {
		for _, m := range flattenAll(t, build(t)) {
			keep(m)
		}
	}
	for _, name := range exampleFiles(t, "event.") {
		env, err := events.Decode(readExample(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if m, ok, err := im.Flatten(env); err == nil && ok {
			keep(m)
		}
	}
	for _, name := range exampleFiles(t, "im.message.") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, readExample(t, name)); err != nil {
			t.Fatal(err)
		}
		if !made[buf.String()] {
			t.Errorf("%s is not what Flatten makes of any event example or golden case", name)
		}
	}
}

func exampleFiles(t *testing.T, prefix string) []string {
	t.Helper()
	entries, err := fs.ReadDir(schemas.V1(), schemas.ExamplesDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			out = append(out, e.Name())
		}
	}
	if len(out) == 0 {
		t.Fatalf("no examples %s*", prefix)
	}
	return out
}

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := fs.ReadFile(schemas.V1(), path.Join(schemas.ExamplesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
