package eventstest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that imports this
// package: golden files are rewritten instead of compared.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/ instead of comparing with them")

// Golden compares got, what a reader made of a log, with the golden file
// at path and fails the test where they differ. Run the tests with -update
// to write got to path instead (its directory is created).
func Golden(tb testing.TB, path string, got []byte) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { // #nosec G301 -- testdata is part of the source tree
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil { // #nosec G306 -- testdata is part of the source tree
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("%s differs (run with -update to accept):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
