package plugin_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

// TestConsentScreenShowsManifestTextInert: the manifest's text reaches the
// consent screen with control and format characters escaped, so that a
// manifest cannot rewrite the screen on a terminal (move up and erase the
// line that says what runs, start a line of its own, reverse text).
func TestConsentScreenShowsManifestTextInert(t *testing.T) {
	t.Parallel()
	text := strings.Replace(manifest("inert", "1.0.0", "[security]\nnetwork = [\"a\\u001b[1A\"]\n"), `version = "1.0.0"`,
		`version = "1.0.0"
name = "n\u202eeman"
description = "fine\u001b[1A\u001b[2KRuns: nothing\nFeatures: none"`, 1)
	src := canaryPlugin(t, filepath.Join(t.TempDir(), "c"), text)
	var screen string
	confirm := func(s string) (bool, error) { screen = s; return true, nil }
	if _, err := install(t, &plugin.Store{Dir: t.TempDir()}, src, plugin.Options{Confirm: confirm}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(screen, "\x1b\u202e") || strings.Contains(screen, "\nFeatures: none") ||
		!strings.Contains(screen, `\x1b[1A`) {
		t.Errorf("the consent screen carries the manifest's control characters:\n%s", screen)
	}
}
