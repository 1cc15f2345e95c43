package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenAPIPrintsTheDocument: xbot openapi writes each document version
// the API serves, with this build's version, and refuses another.
func TestOpenAPIPrintsTheDocument(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{"3.1": "3.1.0", "3.0": "3.0.3"} {
		out := filepath.Join(t.TempDir(), "openapi.json")
		if err := runOpenAPI([]string{"--spec", spec, "--out", out}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			OpenAPI string `json:"openapi"`
			Info    struct{ Version string }
			Paths   map[string]any
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.OpenAPI != want || doc.Info.Version != version || doc.Paths["/v1/runs"] == nil {
			t.Errorf("--spec %s: openapi %q version %q, %d paths (%v)", spec, doc.OpenAPI, doc.Info.Version, len(doc.Paths), err)
		}
	}
	if err := runOpenAPI([]string{"--spec", "2.0"}); err == nil {
		t.Error("--spec 2.0 was accepted")
	}
}
