package bwrap

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOnlyFilesEveryUserMayReadAreCopied: etcCopies copies a regular file
// every user may read, of at most maxEtcCopy bytes, on the descriptors from
// the first it is given; it binds anything else (a file only its owner may
// read stays unreadable for the sandbox user), and a path that does not
// exist is left to bwrap's -try.
func TestOnlyFilesEveryUserMayReadAreCopied(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	write := func(name string, size int, mode os.FileMode) {
		if err := os.WriteFile(path(name), make([]byte, size), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path(name), mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	write("public", 10, 0o644)
	write("private", 10, 0o640)
	write("large", maxEtcCopy+1, 0o644)
	write("also-public", maxEtcCopy, 0o444)
	if err := os.Mkdir(path("dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	args, files := etcCopies([]string{path("public"), path("private"), path("large"), path("dir"), path("missing"),
		path("also-public")}, 7)
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
	}()
	want := []string{
		"--perms", "0444", "--file", "7", path("public"),
		"--ro-bind-try", path("private"), path("private"),
		"--ro-bind-try", path("large"), path("large"),
		"--ro-bind-try", path("dir"), path("dir"),
		"--ro-bind-try", path("missing"), path("missing"),
		"--perms", "0444", "--file", "8", path("also-public"),
	}
	if !slices.Equal(args, want) {
		t.Errorf("etcCopies args:\n got %q\nwant %q", args, want)
	}
	if len(files) != 2 || files[0].Name() != path("public") || files[1].Name() != path("also-public") {
		t.Errorf("etcCopies opened %v, want public and also-public", files)
	}
}
