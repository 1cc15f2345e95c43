package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// TestAutoFailsClosed: with compute_provider=auto and no usable bwrap (none
// in PATH), `xbot executor` refuses to start, naming what to install and
// the explicit opt-out; only `xbot dev` falls back to the local provider.
// Not parallel: it empties PATH.
func TestAutoFailsClosed(t *testing.T) {
	t.Setenv("PATH", "")
	for _, dev := range []bool{false, true} {
		s, err := load("executor", []string{"--log-level", "error", "--compute-dir", t.TempDir()}, "json")
		if err != nil {
			t.Fatal(err)
		}
		s.dev = dev
		p, err := s.computeProvider("")
		if dev {
			if err != nil || p.Name() != "local" {
				t.Fatalf("xbot dev: %v, %v; want the local fallback", p, err)
			}
			continue
		}
		if err == nil {
			t.Fatalf("xbot executor with compute_provider=auto and no bwrap: got provider %s, want an error", p.Name())
		}
		if !errors.Is(err, compute.ErrUnavailable) || !strings.Contains(err.Error(), "apt-get install -y bubblewrap") ||
			!strings.Contains(err.Error(), "compute_provider=local") {
			t.Errorf("error %q should wrap ErrUnavailable, say what to install and how to opt out", err)
		}
	}
}
