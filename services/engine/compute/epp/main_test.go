package epp_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// pluginDir holds the reference plugin, built once for the package's tests.
var pluginDir string

func TestMain(m *testing.M) {
	if helperPlugin() { // this binary started as a test plugin
		return
	}
	dir, err := os.MkdirTemp("", "xbot-epp-plugin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := computetest.BuildReferencePlugin(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	pluginDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
