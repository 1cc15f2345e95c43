//go:build browser

package browser_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// imDrive is what im.mjs reports.
type imDrive struct {
	Screenshots []string `json:"screenshots"`
	Ready       struct {
		Endpoint       string `json:"endpoint"`
		CanExecute     string `json:"canExecute"`
		ShellIsolation string `json:"shellIsolation"`
	} `json:"ready"`
	BeforeAllow []string `json:"beforeAllow"`
	AfterAllow  []string `json:"afterAllow"`
	Arrived     []string `json:"arrived"`
	Sent        []string `json:"sent"`
	History     []struct {
		From string `json:"from"`
		Text string `json:"text"`
	} `json:"history"`
	Statuses      []string `json:"statuses"`
	Error         string   `json:"error"`
	Replaced      string   `json:"replaced"`
	OtherStatus   string   `json:"otherStatus"`
	GroupSent     string   `json:"groupSent"`
	PrivateHidden bool     `json:"privateHidden"`
}

// imDriveDir is a directory holding im.mjs and the pinned packages
// (playwright-core) as node_modules.
func imDriveDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "node is not installed (Debian: apt-get install nodejs npm)")
	}
	modules := install(t)
	dir := t.TempDir()
	copyFile(t, filepath.Join("web", "im.mjs"), filepath.Join(dir, "im.mjs"))
	copyFile(t, filepath.Join("web", "lib.mjs"), filepath.Join(dir, "lib.mjs"))
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// imArtifactsDir is where a test's screenshots go:
// $XBOT_ARTIFACTS/browser/<name>, or artifacts/browser/<name> at the
// repository's root; earlier screenshots there are removed, the other
// tests' are left alone.
func imArtifactsDir(t *testing.T, name string) string {
	t.Helper()
	base := os.Getenv("XBOT_ARTIFACTS")
	if base == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		base = filepath.Join(root, "artifacts")
	}
	dir, err := filepath.Abs(filepath.Join(base, "browser", name))
	if err == nil {
		err = os.RemoveAll(dir)
	}
	if err == nil {
		err = os.MkdirAll(dir, 0o750)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runIMDrive runs im.mjs with its screenshots in artifacts and returns its
// report.
func runIMDrive(t *testing.T, dir, chromium, artifacts string, args ...string) imDrive {
	t.Helper()
	return runScript[imDrive](t, dir, chromium, "im.mjs", append([]string{"--artifacts", artifacts}, args...)...)
}

func (d imDrive) screenshotPaths() []string { return d.Screenshots }
