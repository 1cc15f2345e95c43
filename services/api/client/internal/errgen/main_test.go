package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedErrorsAreCurrent fails when errors_gen.go is not what the
// registry generates: run go generate ./services/api/client.
func TestGeneratedErrorsAreCurrent(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "schemas", "v1", "errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "errors_gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("services/api/client/errors_gen.go is out of date with schemas/v1/errors.json: run go generate ./services/api/client")
	}
}

func TestGenerateRefusesABadRegistry(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"not JSON":   `{`,
		"empty":      `[]`,
		"twice":      `[{"code":"a","status":400},{"code":"a","status":400}]`,
		"bad name":   `[{"code":"Bad-Code","status":400}]`,
		"bad status": `[{"code":"a","status":42}]`,
	} {
		if _, err := generate([]byte(src)); err == nil {
			t.Errorf("%s: generated without an error", name)
		}
	}
}
