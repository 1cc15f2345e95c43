// Package nodecheck validates UI message streams with the real Vercel AI SDK
// (the npm package ai, pinned by package-lock.json) under Node, for tests:
// the chunk schema, the fields each chunk may carry, the SSE framing and the
// SDK's own message builder (readUIMessageStream). See check.mjs.
//
// The first use installs the pinned packages with `npm ci` into a cache
// directory keyed by the lock file's hash; later uses reuse it. Without node
// or npm (or without a registry to install from) the checks skip, unless
// the environment has CI=true, where they fail.
package nodecheck

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

//go:embed package.json package-lock.json check.mjs
var files embed.FS

// Result is what the checker saw: chunk counts and each message's final
// state as the SDK built it.
type Result struct {
	Chunks   int            `json:"chunks"`
	Types    map[string]int `json:"types"`
	Messages []Message      `json:"messages"`
}

// Message is a UI message as readUIMessageStream left it.
type Message struct {
	ID       string          `json:"id"`
	Metadata json.RawMessage `json:"metadata"`
	Parts    []Part          `json:"parts"`
}

// Part is one part of a Message (a subset of the SDK's fields).
type Part struct {
	Type       string          `json:"type"`
	State      string          `json:"state"`
	Text       string          `json:"text"`
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	Input      json.RawMessage `json:"input"`
	Output     json.RawMessage `json:"output"`
	ErrorText  string          `json:"errorText"`
	Approval   json.RawMessage `json:"approval"`
	ID         string          `json:"id"`
	Data       json.RawMessage `json:"data"`
}

// installTimeout bounds `npm ci`: a cold install of the pinned packages takes
// a few seconds; a slow registry gets minutes before the test gives up.
const installTimeout = 5 * time.Minute

// Target is a stream to check: a URL or a file.
type Target struct {
	URL  string
	File string
}

// ErrUnavailable says Node.js or the pinned npm packages are not there to
// check with (node or npm not installed, npm ci failed).
var ErrUnavailable = errors.New("nodecheck: the AI SDK check is unavailable")

// Check checks every target in one Node process and fails t on any problem.
// URLs are fetched with header; their streams must end (a run stream ends
// with [DONE]) within timeout. Results are in the order of targets. Without
// Node.js or npm it skips t, or fails it when CI=true.
func Check(t testing.TB, timeout time.Duration, header http.Header, targets ...Target) []Result {
	t.Helper()
	res, err := Run(context.Background(), timeout, header, targets...)
	if errors.Is(err, ErrUnavailable) {
		unavailable(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Run is Check for callers outside a test: it returns the problems as an
// error (wrapping ErrUnavailable when the check cannot run at all).
func Run(ctx context.Context, timeout time.Duration, header http.Header, targets ...Target) ([]Result, error) {
	args := []string{"--timeout-ms", fmt.Sprint(timeout.Milliseconds())}
	for name, vals := range header {
		for _, v := range vals {
			args = append(args, "--header", name+": "+v)
		}
	}
	for _, tg := range targets {
		if tg.File == "" {
			args = append(args, "--url", tg.URL)
			continue
		}
		abs, err := filepath.Abs(tg.File)
		if err != nil {
			return nil, err
		}
		args = append(args, "--file", abs)
	}
	dir, err := install()
	if err != nil {
		return nil, err
	}
	script, err := placeScript(dir)
	if err != nil {
		return nil, err
	}
	return runNode(ctx, dir, timeout, append([]string{script}, args...), len(targets))
}

// runNode runs the checker and reads its results.
func runNode(ctx context.Context, dir string, timeout time.Duration, args []string, targets int) ([]Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("the AI SDK rejected the stream (%w):\n%s", err, stderr.String())
	}
	var res []Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || len(res) != targets {
		return nil, fmt.Errorf("checker output %q: %w", stdout.String(), err)
	}
	return res, nil
}

// unavailable skips the test, or fails it in CI.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("nodecheck: "+format, args...)
	}
	t.Skipf("nodecheck: "+format+" (set CI=true to make this a failure)", args...)
}

// placeScript writes check.mjs into dir under a name that changes with its
// content, so an edited script never runs as an older copy, and returns it.
func placeScript(dir string) (string, error) {
	src, err := files.ReadFile("check.mjs")
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	name := "check-" + hex.EncodeToString(sum[:8]) + ".mjs"
	if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
		return name, nil
	}
	tmp, err := os.CreateTemp(dir, "check-*.tmp")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename
	if _, err := tmp.Write(src); err != nil {
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return name, os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// install returns a directory holding the pinned node_modules, keyed by the
// lock file's hash.
func install() (string, error) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%w: %s is not installed (Debian: apt-get install nodejs npm)", ErrUnavailable, tool)
		}
	}
	root, dir, err := cacheDirs()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "ai", "package.json")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(root, "install-")
	if err != nil {
		return "", err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // gone after the rename; cleans up a failed install
	if out, err := npmCI(tmp); err != nil {
		return "", fmt.Errorf("%w: npm ci failed (%w):\n%s", ErrUnavailable, err, out)
	}
	// Concurrent installs (test binaries run in parallel) race to rename;
	// the loser's copy is removed and the winner's used.
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			return "", fmt.Errorf("install node check: %w", err)
		}
	}
	return dir, nil
}

// cacheDirs returns the cache root and the install directory of this lock.
func cacheDirs() (root, dir string, err error) {
	lock, err := files.ReadFile("package-lock.json")
	if err != nil {
		return "", "", err
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root = filepath.Join(cache, "xbot", "nodecheck")
	return root, filepath.Join(root, hex.EncodeToString(sum[:8])), os.MkdirAll(root, 0o750)
}

// npmCI installs the pinned packages into dir.
func npmCI(dir string) ([]byte, error) {
	if err := writeFiles(dir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// writeFiles writes what npm ci needs.
func writeFiles(dir string) error {
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
