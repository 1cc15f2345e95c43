package plugin_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

// TestUpdateReconsent: replacing an installed plugin needs --force, and new
// consent exactly when what it runs, touches, supports or inherits changes;
// its data/ stays.
func TestUpdateReconsent(t *testing.T) {
	t.Parallel()
	s := &plugin.Store{Dir: t.TempDir()}
	canary := filepath.Join(t.TempDir(), "c")
	v1, err := install(t, s, canaryPlugin(t, canary, manifest("upd", "1.0.0", "")), plugin.Options{Confirm: yes})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v1.Dir, "data", "state"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	same := canaryPlugin(t, canary, manifest("upd", "1.1.0", `[config.fields.zone]
type = "string"`))
	if _, err := install(t, s, same, plugin.Options{Confirm: yes}); !errors.Is(err, plugin.ErrInstalled) {
		t.Fatalf("install over an installed id without Force: %v", err)
	}
	v2, err := install(t, s, same, plugin.Options{Force: true}) // nothing to consent to again
	if err != nil || v2.Manifest.Provider.Version != "1.1.0" {
		t.Fatalf("update with the same runtime, security and features: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(v2.Dir, "data", "state")); err != nil || string(data) != "kept" {
		t.Errorf("the plugin's data after the update: %q, %v", data, err)
	}
	// Each step changes one part more.
	features := "[features]\nsupported = [\"sandbox.lifecycle\", \"exec.run\", \"files.rw\"]\n"
	steps := []struct{ part, extra string }{
		{"features", features},
		{"security", features + "[security]\nnetwork = [\"api.example.com\"]\n"},
		{"inherit", features + "[security]\nnetwork = [\"api.example.com\"]\n[core]\ninherit = [\"sandbox_limits\"]\n"},
	}
	for _, step := range steps {
		text := strings.Replace(manifest("upd", "2.0.0", step.extra), "[features]\nsupported = [\"sandbox.lifecycle\", \"exec.run\"]\n", "", 1)
		src := canaryPlugin(t, canary, text)
		_, err := install(t, s, src, plugin.Options{Force: true})
		if !errors.Is(err, plugin.ErrConsent) || !strings.Contains(err.Error(), "changed: "+step.part+"\n") {
			t.Errorf("update changing %s without consent: %v; want ErrConsent naming it", step.part, err)
		}
		var screen string
		if _, err := install(t, s, src, plugin.Options{Force: true, Confirm: func(sc string) (bool, error) { screen = sc; return true, nil }}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(screen, "Replaces version") {
			t.Errorf("the update's screen: %s", screen)
		}
	}
	if _, err := os.Stat(canary); err == nil {
		t.Error("an update ran the plugin")
	}
}

func TestPinnedDigest(t *testing.T) {
	t.Parallel()
	src := canaryPlugin(t, filepath.Join(t.TempDir(), "c"), manifest("pin", "1.0.0", ""))
	sum, err := plugin.TreeDigest(src)
	if err != nil {
		t.Fatal(err)
	}
	s := &plugin.Store{Dir: t.TempDir()}
	if _, err := install(t, s, src, plugin.Options{Confirm: yes, SHA256: strings.Repeat("0", 64)}); !errors.Is(err, plugin.ErrDigest) {
		t.Errorf("a wrong --sha256: %v", err)
	}
	// As list and install print it: sha256:<hex>; any case.
	in, err := install(t, s, src, plugin.Options{Confirm: yes, SHA256: "sha256:" + strings.ToUpper(sum)})
	if err != nil || in.Receipt.Trust != plugin.TrustPinned {
		t.Fatalf("pinned install: %v", err)
	}
}

func TestRemoveKeepsSettingsUnlessPurged(t *testing.T) {
	t.Parallel()
	s := &plugin.Store{Dir: t.TempDir()}
	src := canaryPlugin(t, filepath.Join(t.TempDir(), "c"), manifest("gone", "1.0.0", "[config.fields.zone]\ntype = \"string\"\n"))
	if _, err := install(t, s, src, plugin.Options{Confirm: yes}); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove("gone", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("gone"); !errors.Is(err, plugin.ErrNotInstalled) {
		t.Errorf("after remove: %v", err)
	}
	if kept, _ := s.Kept(); len(kept) != 1 || kept[0].Provider.ID != "gone" {
		t.Errorf("kept %v, want gone's manifest (its settings stay known)", kept)
	}
	if err := s.Remove("gone", true); err != nil {
		t.Fatal(err)
	}
	if kept, _ := s.Kept(); len(kept) != 0 {
		t.Errorf("kept after purge: %v", kept)
	}
	if err := s.Remove("gone", false); !errors.Is(err, plugin.ErrNotInstalled) {
		t.Errorf("removing what is not installed: %v", err)
	}
}

// TestTamperedPluginRefusedAtStart: the reference plugin, installed, runs;
// once a file of it changes, no process of it starts.
func TestTamperedPluginRefusedAtStart(t *testing.T) {
	t.Parallel()
	s := &plugin.Store{Dir: t.TempDir()}
	in, err := install(t, s, computetest.ReferencePlugin(t), plugin.Options{Confirm: yes})
	if err != nil {
		t.Fatal(err)
	}
	cfg := in.ProviderConfig(map[string]string{"sandbox_limits": "rlimit"}, plugin.Host{Name: "xbot", Version: "test"}, zaptest.NewLogger(t))
	p, err := epp.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(in.Dir, "local-process")
	f, err := os.OpenFile(bin, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte{0})
	_ = f.Close()
	_, err = p.Open(t.Context(), testSpec())
	if !errors.Is(err, plugin.ErrTampered) {
		t.Fatalf("Open after the plugin's binary changed: %v, want ErrTampered", err)
	}
	if _, err := epp.New(t.Context(), cfg); !errors.Is(err, plugin.ErrTampered) {
		t.Fatalf("New after the plugin's binary changed: %v, want ErrTampered", err)
	}
}
