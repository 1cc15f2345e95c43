package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xbot-runtime/xbot/infra/config"
)

// fakeWorld is a hermetic set of layers: temporary work and home directories
// and an empty process environment.
type fakeWorld struct {
	work, home string
	src        config.Sources
}

func newWorld(t *testing.T) *fakeWorld {
	t.Helper()
	w := &fakeWorld{work: t.TempDir(), home: t.TempDir()}
	w.src = config.Sources{Env: map[string]string{}, WorkDir: w.work, HomeDir: w.home}
	return w
}

func (w *fakeWorld) dotenvPath() string     { return filepath.Join(w.work, ".env") }
func (w *fakeWorld) homeDotenvPath() string { return filepath.Join(w.home, ".xbot", ".env") }
func (w *fakeWorld) tomlPath() string       { return filepath.Join(w.home, ".xbot", "config.toml") }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustLoad(t *testing.T, src config.Sources) *config.Resolved {
	t.Helper()
	r, err := config.Load(src)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return r
}
