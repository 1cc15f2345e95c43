package computetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// PluginEnv names a directory holding a prebuilt reference plugin (the
// binary local-process and its xbot-provider.toml), for tests that cannot
// build one (an unprivileged user without the Go module cache).
const PluginEnv = "XBOT_TEST_EPP_PLUGIN"

// buildTimeout bounds building the plugin on a loaded machine.
const buildTimeout = 5 * time.Minute

// ReferencePlugin returns a fresh directory holding the reference EPP/1
// plugin (cmd/local-process) as a user installs it: the binary
// local-process, built with go build, beside its manifest
// xbot-provider.toml. With $XBOT_TEST_EPP_PLUGIN set, both are copied from
// there instead.
func ReferencePlugin(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := BuildReferencePlugin(dir); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// BuildReferencePlugin puts the reference plugin into dir, as
// ReferencePlugin does (for a TestMain that shares one build).
func BuildReferencePlugin(dir string) error {
	src := os.Getenv(PluginEnv)
	if src == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		src = filepath.Join(root, "cmd", "local-process")
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "local-process"), ".")
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/local-process: %w\n%s", err, out)
		}
	} else if err := copyFile(filepath.Join(src, "local-process"), filepath.Join(dir, "local-process"), 0o700); err != nil {
		return err
	}
	return copyFile(filepath.Join(src, "xbot-provider.toml"), filepath.Join(dir, "xbot-provider.toml"), 0o600)
}

// moduleRoot is the nearest directory above the working directory (a test's
// package) that holds go.mod.
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

func copyFile(from, to string, mode os.FileMode) error {
	data, err := os.ReadFile(from) // #nosec G304 G703 -- the test's own files
	if err != nil {
		return err
	}
	return os.WriteFile(to, data, mode) // #nosec G703 -- the test's own directory
}
