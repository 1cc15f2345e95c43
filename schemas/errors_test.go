package schemas_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/schemas"
)

// TestErrorRegistry checks errors.json against its schema and events.Codes.
func TestErrorRegistry(t *testing.T) {
	t.Parallel()
	if err := validate(t, schemas.ErrorsSchemaFile, readFile(t, schemas.ErrorsFile)); err != nil {
		t.Fatal(err)
	}
	reg, err := schemas.Errors()
	if err != nil {
		t.Fatal(err)
	}
	inRegistry := map[string]bool{}
	for _, e := range reg {
		if inRegistry[e.Code] {
			t.Errorf("errors.json lists %s twice", e.Code)
		}
		inRegistry[e.Code] = true
	}
	for _, c := range events.Codes() {
		if !inRegistry[string(c)] {
			t.Errorf("code %s is missing from errors.json", c)
		}
		delete(inRegistry, string(c))
	}
	for c := range inRegistry {
		t.Errorf("errors.json lists %s, which events.Codes() does not", c)
	}
}
