package mcptest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/devstack"
	"github.com/xbot-runtime/xbot/infra/devstack/eventually"
)

// EverythingPackage is the npm package of the MCP reference server.
const EverythingPackage = "@modelcontextprotocol/server-everything"

// everythingDir is the directory of the pinned install (package.json,
// package-lock.json; node_modules from `npm ci`, which CI runs).
func everythingDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "everything")
}

// unavailable skips the test, or fails it in CI (CI=true).
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("MCP reference server: "+format, args...)
	}
	t.Skipf("MCP reference server: "+format+" (with CI=true this is a failure)", args...)
}

// Everything returns a directory holding the reference server's installed
// packages (node_modules) that the sandbox user can read, and the path of
// its entry script below it. Nothing is downloaded: without node or the
// pinned install (npm ci in mcptest/everything) the test is skipped, or
// fails on CI.
func Everything(t testing.TB) (dir, script string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not installed (Debian: apt-get install nodejs npm)")
	}
	lock, err := os.ReadFile(filepath.Join(everythingDir(), "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lock, &l); err != nil {
		t.Fatal(err)
	}
	want := l.Packages["node_modules/"+EverythingPackage].Version
	modules := filepath.Join(everythingDir(), "node_modules")
	if got := installedVersion(modules); got != want {
		unavailable(t, "%s %s is not installed in %s (run npm ci there; found %q)", EverythingPackage, want, everythingDir(), got)
	}
	sum := sha256.Sum256(lock)
	dir = filepath.Join(os.TempDir(), "xbot-mcp-everything-"+hex.EncodeToString(sum[:8]))
	if installedVersion(filepath.Join(dir, "node_modules")) != want {
		publish(t, modules, dir)
	}
	return dir, filepath.Join(dir, "node_modules", filepath.FromSlash(EverythingPackage), "dist", "index.js")
}

func installedVersion(modules string) string {
	raw, err := os.ReadFile(filepath.Join(modules, filepath.FromSlash(EverythingPackage), "package.json")) // #nosec G703 -- the test's own install
	var p struct {
		Version string `json:"version"`
	}
	if err != nil || json.Unmarshal(raw, &p) != nil {
		return ""
	}
	return p.Version
}

// publish copies modules to dir/node_modules, readable by everyone (the
// sandbox user runs node on it), through a temporary directory and a
// rename; a concurrent copy that won the rename is used as it is.
func publish(t testing.TB, modules, dir string) {
	t.Helper()
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+"-copy-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // #nosec G703 -- the test's own temporary directory
	if err := copyTree(modules, filepath.Join(tmp, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // #nosec G302 G703 -- the sandbox user reads the packages
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil && installedVersion(filepath.Join(dir, "node_modules")) == "" { // #nosec G703
		t.Fatalf("publish the reference server: %v", err)
	}
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755) // #nosec G301 G703 -- readable by the sandbox user
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target) // #nosec G122 -- a copy of the test's own install
		}
		return copyFile(p, target, info.Mode()&0o111|0o644)
	})
}

func copyFile(from, to string, mode fs.FileMode) error {
	in, err := os.Open(from) // #nosec G304 -- the test's own install
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode) // #nosec G304 G703 -- the test's own copy
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// ServeEverything runs the reference server with transport
// ("streamableHttp" or "sse") on a free port of this host until the test
// ends, and returns its endpoint's URL.
func ServeEverything(t testing.TB, transport string) string {
	t.Helper()
	_, script := Everything(t)
	path := map[string]string{"streamableHttp": "/mcp", "sse": "/sse"}[transport]
	for attempt := 0; ; attempt++ {
		port, err := devstack.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if url, ok := serveOn(t, script, transport, port); ok {
			return url + path
		}
		if attempt == 2 {
			t.Fatalf("the reference server did not start on a free port three times")
		}
	}
}

// serveOn starts the server on port; false when it exited first (the port
// was taken meanwhile).
func serveOn(t testing.TB, script, transport string, port int) (string, bool) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "node", script, transport) // #nosec G204 -- the test's own server
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	up := false
	eventually.Succeeds(t, 30*time.Second, "the reference server listens", func() error {
		select {
		case <-exited:
			return nil
		default:
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+"/", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		up = true
		return nil
	})
	if !up {
		return "", false
	}
	return fmt.Sprintf("http://%s", addr), true
}
