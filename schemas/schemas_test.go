package schemas_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/schemas"
)

func TestSchemasCompile(t *testing.T) {
	t.Parallel()
	if _, err := compiled(); err != nil {
		t.Fatal(err)
	}
	for _, name := range schemas.SchemaFiles() {
		doc, _ := readJSON(t, name).(map[string]any)
		if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema is %v, want draft 2020-12", name, doc["$schema"])
		}
		if doc["$id"] != schemas.SchemaID(name) {
			t.Errorf("%s: $id is %v, want %s", name, doc["$id"], schemas.SchemaID(name))
		}
	}
}

func TestValidExamplesMatchTheirEnvelope(t *testing.T) {
	t.Parallel()
	for _, name := range append(examples(t, "command."), examples(t, "event.")...) {
		if err := validate(t, envelopeFor(t, name), readFile(t, example(name))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// invalidExample is one entry of examples/invalid/manifest.json.
type invalidExample struct {
	File  string `json:"file"`
	Field string `json:"field"`
	Why   string `json:"why"`
}

func invalidManifest(t *testing.T) []invalidExample {
	t.Helper()
	var m []invalidExample
	if err := json.Unmarshal(readFile(t, path.Join(schemas.InvalidExamplesDir, "manifest.json")), &m); err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(schemas.V1(), schemas.InvalidExamplesDir)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, e := range m {
		if e.Field == "" || e.Why == "" {
			t.Errorf("manifest entry %s: field and why are required", e.File)
		}
		listed[e.File] = true
	}
	for _, e := range entries {
		if e.Name() != "manifest.json" && !listed[e.Name()] {
			t.Errorf("invalid example %s is not in manifest.json", e.Name())
		}
		delete(listed, e.Name())
	}
	for f := range listed {
		t.Errorf("manifest.json lists %s, which does not exist", f)
	}
	return m
}

// TestInvalidExamplesRejectedByBoth checks that the schema and the Go code
// both reject every invalid example: the schema blames exactly the field the
// manifest names and, for commands, so does commands.Validate.
func TestInvalidExamplesRejectedByBoth(t *testing.T) {
	t.Parallel()
	for _, ex := range invalidManifest(t) {
		data := readFile(t, path.Join(schemas.InvalidExamplesDir, ex.File))
		err := validate(t, envelopeFor(t, ex.File), data)
		if err == nil {
			t.Errorf("%s: schema accepts it (%s)", ex.File, ex.Why)
		} else if paths := errorPaths(err); !slices.Equal(paths, []string{ex.Field}) {
			t.Errorf("%s: schema blames %q, want only %q", ex.File, paths, ex.Field)
		}
		if strings.HasPrefix(ex.File, "command.") {
			checkGoRejectsCommand(t, ex, data)
		} else if err := foldEvent(data); err == nil {
			t.Errorf("%s: the Go decoder and events.Fold accept it (%s)", ex.File, ex.Why)
		}
	}
}

func checkGoRejectsCommand(t *testing.T, ex invalidExample, data []byte) {
	t.Helper()
	_, _, err := commands.Decode(data)
	var ve *commands.ValidationError
	if !errors.As(err, &ve) {
		t.Errorf("%s: commands.Decode = %v, want a *ValidationError", ex.File, err)
		return
	}
	var fields []string
	for _, p := range ve.Problems {
		fields = append(fields, p.Field)
	}
	if !slices.Equal(fields, []string{ex.Field}) {
		t.Errorf("%s: commands.Validate blames %q, want only %q", ex.File, fields, ex.Field)
	}
}

// foldEvent runs an event through everything a Go reader does with it:
// decode, payload decode, and a fold onto a run in a state that allows it.
func foldEvent(data []byte) error {
	e, err := events.Decode(data)
	if err != nil {
		return err
	}
	if _, err := e.DecodePayload(); err != nil {
		return err
	}
	_, err = events.Fold(priorState(e), e)
	return err
}

// priorState returns the state of a run just before e: the first state that
// allows e's type (an existing run's state before the zero one), with e's item
// open when e continues an item.
func priorState(e events.Envelope) events.RunState {
	s := events.RunState{RunID: e.RunID, TenantID: e.TenantID, PlatformSessionID: e.PlatformSessionID, LastSeq: e.Seq - 1}
	order := append(events.Statuses()[1:], events.StatusCreated)
	for _, st := range order {
		if events.Allowed(st, e.Type) {
			s.Status = st
			break
		}
	}
	if s.Status == events.StatusCreated {
		return events.RunState{LastSeq: e.Seq - 1}
	}
	// A queued run resumes only when it had been resumed from a pause.
	s.Requeued = s.Status == events.StatusQueued && e.Type == events.RunResumed
	if e.ItemID != "" && e.Type != events.ItemStarted {
		s.Items = events.ItemsOf(events.ItemRef{ID: e.ItemID, Type: events.ItemToolCall, Status: events.ItemStatusStarted})
	}
	return s
}

// TestContentLimit checks the 256 KiB content limit at its boundary, with
// ASCII text, where characters and bytes agree.
func TestContentLimit(t *testing.T) {
	t.Parallel()
	base := readJSON(t, example("command.AppendUserInput.steer.json")).(map[string]any)
	for _, tc := range []struct {
		n  int
		ok bool
	}{{commands.MaxContentBytes, true}, {commands.MaxContentBytes + 1, false}} {
		base["payload"].(map[string]any)["content"] = strings.Repeat("a", tc.n)
		data, err := json.Marshal(base)
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := validate(t, schemas.CommandEnvelopeFile, data)
		_, _, goErr := commands.Decode(data)
		if (schemaErr == nil) != tc.ok || (goErr == nil) != tc.ok {
			t.Errorf("content of %d bytes: schema error %v, Go error %v; want ok=%v", tc.n, schemaErr, goErr, tc.ok)
		}
	}
}
