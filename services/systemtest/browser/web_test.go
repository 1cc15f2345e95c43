//go:build browser

package browser_test

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
	"time"
)

// installTimeout bounds `npm ci` of the pinned packages: a few seconds from a
// warm registry, minutes from a slow one before the test gives up.
const installTimeout = 5 * time.Minute

// chromiumPath is Debian's Chromium (apt-get install chromium), or
// $XBOT_CHROMIUM.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("XBOT_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		unavailable(t, "chromium is not installed at %s (Debian: apt-get install chromium; or set XBOT_CHROMIUM)", path)
	}
	return path
}

// unavailable skips the test, or fails it in CI (CI=true).
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("browser test: "+format, args...)
	}
	t.Skipf("browser test: "+format+" (with CI=true this is a failure)", args...)
}

// webDir is a copy of web/ in a directory of the test, its node_modules the
// pinned packages installed once per lock file (a cache directory keyed by
// its hash), and page.jsx bundled into site/ beside index.html.
func webDir(t *testing.T) (dir, site string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable(t, "%s is not installed (Debian: apt-get install nodejs npm)", tool)
		}
	}
	modules := install(t)
	dir, site = t.TempDir(), filepath.Join(t.TempDir(), "site")
	for _, name := range []string{"package.json", "transport.js", "page.jsx", "index.html", "drive.mjs", "lib.mjs"} {
		copyFile(t, filepath.Join("web", name), filepath.Join(dir, name))
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(site, 0o750); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join("web", "index.html"), filepath.Join(site, "index.html"))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "node_modules", ".bin", "esbuild"), "page.jsx", "--bundle",
		"--format=iife", "--jsx=automatic", "--minify", "--log-level=warning",
		`--define:process.env.NODE_ENV="production"`, "--outfile="+filepath.Join(site, "page.js"))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bundle the page: %v\n%s", err, out)
	}
	return dir, site
}

// install returns the node_modules directory of web/package-lock.json:
// web/node_modules when it holds exactly the locked packages (CI runs
// `npm ci` there first), else a cache directory keyed by the lock's hash,
// installed with `npm ci` the first time.
func install(t *testing.T) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join("web", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if local, err := filepath.Abs(filepath.Join("web", "node_modules")); err == nil && installed(local, lock) {
		return local
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "xbot", "browser")
	dir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	modules := filepath.Join(dir, "node_modules")
	if _, err := os.Stat(filepath.Join(modules, "playwright-core", "package.json")); err == nil {
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
	copyFile(t, filepath.Join("web", "package.json"), filepath.Join(tmp, "package.json"))
	copyFile(t, filepath.Join("web", "package-lock.json"), filepath.Join(tmp, "package-lock.json"))
	ctx, cancel := context.WithTimeout(t.Context(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	// playwright-core never fetches a browser; the variable says so to any
	// package that would.
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		unavailable(t, "npm ci failed (%v):\n%s", err, out)
	}
	// A concurrent install may have won the rename: use its copy.
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(modules); statErr != nil {
			t.Fatalf("install the page's packages: %v", err)
		}
	}
	return modules
}

// installed reports whether modules holds every package of lock in its
// locked version (an optional package may be missing: esbuild's binaries of
// other platforms).
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

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// artifactsDir is where the screenshots go: $XBOT_ARTIFACTS/browser, or
// artifacts/browser at the repository's root. Earlier screenshots are
// removed.
func artifactsDir(t *testing.T) string {
	t.Helper()
	base := os.Getenv("XBOT_ARTIFACTS")
	if base == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		base = filepath.Join(root, "artifacts")
	}
	dir, err := filepath.Abs(filepath.Join(base, "browser"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	return dir
}

// moduleRoot is the nearest directory above the working directory holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
