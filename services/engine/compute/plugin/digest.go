package plugin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ReceiptFile is the install receipt at the plugin's root.
const ReceiptFile = ".xbot-install.json"

// DataDir is the plugin's own state directory at its root: left out of the
// digest and kept across updates.
const DataDir = "data"

// excluded reports whether a path (slash-separated, relative to the
// plugin's root) is left out of the tree: the top-level .git, receipt and
// data directory.
func excluded(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return top == ".git" || top == DataDir || rel == ReceiptFile
}

// TreeDigest is the hex SHA-256 of the plugin's tree:
//
//	SHA-256( for each regular file, sorted by the bytes of its path:
//	         path "\0" ("x" if executable else "-") "\0" hex(SHA-256(contents)) "\n" )
//
// with slash-separated paths relative to dir, excluding the top-level .git/,
// data/ and .xbot-install.json. Anything but regular files and directories
// (a symlink) is an error: such a tree was never installed.
func TreeDigest(dir string) (string, error) {
	type entry struct{ rel, line string }
	var entries []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if excluded(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file: %w", rel, ErrTampered)
		}
		line, err := digestLine(p, rel)
		entries = append(entries, entry{rel, line})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("tree digest of %s: %w", dir, err)
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare([]byte(a.rel), []byte(b.rel)) })
	h := sha256.New()
	for _, e := range entries {
		_, _ = io.WriteString(h, e.line)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func digestLine(p, rel string) (string, error) {
	f, err := os.Open(p) // #nosec G304 -- a file of the plugin's own tree
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	mode := "-"
	if fi.Mode().Perm()&0o111 != 0 {
		mode = "x"
	}
	return rel + "\x00" + mode + "\x00" + hex.EncodeToString(h.Sum(nil)) + "\n", nil
}

// Sha256File is the hex SHA-256 of a file.
func Sha256File(p string) (string, error) {
	data, err := os.ReadFile(p) // #nosec G304 -- a file of the plugin's own tree
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// Errors of the store.
var (
	// ErrTampered: the installed tree is not what was installed (its digest
	// differs from the receipt's, or it holds what no install writes).
	ErrTampered = errors.New("provider files changed since install")
	// ErrUnsafe: the source holds what is never installed (a symlink, a
	// hard link, a device, a path leaving the plugin, too many or too large
	// files).
	ErrUnsafe = errors.New("unsafe provider source")
	// ErrConsent: installing needs consent and none was given.
	ErrConsent = errors.New("provider install needs consent")
	// ErrNotInstalled: no provider of that id is installed.
	ErrNotInstalled = errors.New("provider is not installed")
	// ErrInstalled: the id is installed; replacing it needs Force.
	ErrInstalled = errors.New("provider is already installed")
	// ErrDigest: the source's digest is not the one asked for (--sha256).
	ErrDigest = errors.New("provider source digest mismatch")
)
