//go:build clients

package clientcheck_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tsClients generates <name>.ts of each document with openapi-typescript, a
// copy of usage.ts for each, and compiles them all with tsc --strict.
func tsClients(t *testing.T, docs map[string][]byte) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "%s is not installed (Debian: apt-get install nodejs npm)", tool)
		}
	}
	modules := install(t)
	dir := t.TempDir()
	for _, f := range []string{"package.json", "tsconfig.json"} {
		copyFile(t, filepath.Join("tsclient", f), filepath.Join(dir, f))
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	usage, err := os.ReadFile(filepath.Join("tsclient", "usage.ts"))
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range docs {
		module := strings.Replace(name, "xbotapi", "xbot", 1) // xbot, xbot30
		spec := filepath.Join(dir, name+".json")
		writeFile(t, spec, doc)
		run(t, dir, filepath.Join(dir, "node_modules", ".bin", "openapi-typescript"), spec, "-o", module+".ts")
		writeFile(t, filepath.Join(dir, "usage"+strings.TrimPrefix(module, "xbot")+".ts"),
			[]byte(strings.Replace(string(usage), `from "./xbot"`, `from "./`+module+`"`, 1)))
		keep(t, "ts/"+module+".ts", filepath.Join(dir, module+".ts"))
	}
	run(t, dir, filepath.Join(dir, "node_modules", ".bin", "tsc"), "-p", "tsconfig.json")
	report(t, filepath.Join(dir, "xbot.ts"), `(?m)^        ((?:Problem|EventEnvelope|\w+Event|\w+Payload)): `)
}

// install returns the node_modules directory of tsclient/package-lock.json:
// tsclient/node_modules when it holds exactly the locked packages (CI runs
// `npm ci` there first), else a cache directory keyed by the lock's hash,
// installed with `npm ci` the first time.
func install(t *testing.T) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join("tsclient", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if local, err := filepath.Abs(filepath.Join("tsclient", "node_modules")); err == nil && installed(local, lock) {
		return local
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "xbot", "clientcheck")
	dir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	modules := filepath.Join(dir, "node_modules")
	if installed(modules, lock) {
		return modules
	}
	if err := os.MkdirAll(root, 0o750); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(root, "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // gone after the rename; cleans up a failed install
	npmCI(t, tmp)
	// A concurrent install may have won the rename: use its copy.
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(modules); statErr != nil {
			t.Fatalf("install the client packages: %v", err)
		}
	}
	return modules
}

// npmCI installs tsclient's pinned packages into dir.
func npmCI(t *testing.T, dir string) {
	t.Helper()
	copyFile(t, filepath.Join("tsclient", "package.json"), filepath.Join(dir, "package.json"))
	copyFile(t, filepath.Join("tsclient", "package-lock.json"), filepath.Join(dir, "package-lock.json"))
	ctx, cancel := context.WithTimeout(t.Context(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		unavailable(t, "npm ci failed (%v):\n%s", err, out)
	}
}

// installed reports whether modules holds every package of lock in its
// locked version (an optional package may be missing).
func installed(modules string, lock []byte) bool {
	var l struct {
		Packages map[string]struct {
			Version  string `json:"version"`
			Optional bool   `json:"optional"`
		} `json:"packages"`
	}
	if json.Unmarshal(lock, &l) != nil || len(l.Packages) < 2 {
		return false
	}
	for path, want := range l.Packages {
		name, ok := strings.CutPrefix(path, "node_modules/")
		if !ok {
			continue // the root project
		}
		b, err := os.ReadFile(filepath.Join(modules, filepath.FromSlash(name), "package.json"))
		var got struct {
			Version string `json:"version"`
		}
		switch {
		case errors.Is(err, fs.ErrNotExist) && want.Optional:
		case err != nil, json.Unmarshal(b, &got) != nil, got.Version != want.Version:
			return false
		}
	}
	return true
}
