package plugin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

// manifest is a valid manifest of id whose program is ./run.sh, with extra
// TOML appended.
func manifest(id, version, extra string) string {
	return fmt.Sprintf(`manifest_version = 1
[provider]
id = %q
version = %q
[compat]
protocol = "epp/1"
[runtime]
kind = "exec"
command = ["./run.sh"]
[features]
supported = ["sandbox.lifecycle", "exec.run"]
%s`, id, version, extra)
}

// canaryPlugin writes a plugin whose program, if it ever ran, would create
// canary; it also carries files a build system or package manager would run.
func canaryPlugin(t *testing.T, canary, manifestText string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\ntouch " + canary + "\n"
	files := map[string]string{"xbot-provider.toml": manifestText, "run.sh": script, "Makefile": "all:\n\ttouch " + canary + "\n",
		"setup.py": "open(" + fmt.Sprintf("%q", canary) + ", 'w')\n", "package.json": `{"scripts":{"postinstall":"touch ` + canary + `"}}`,
		"lib/helper.txt": "data"}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if name == "run.sh" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func yes(string) (bool, error) { return true, nil }

func install(t *testing.T, s *plugin.Store, dir string, opt plugin.Options) (*plugin.Installed, error) {
	t.Helper()
	return s.Install(t.Context(), plugin.Source{Dir: dir}, opt)
}

func TestInstallRunsNothing(t *testing.T) {
	t.Parallel()
	canary := filepath.Join(t.TempDir(), "canary")
	src := canaryPlugin(t, canary, manifest("canary", "1.0.0", ""))
	s := &plugin.Store{Dir: t.TempDir()}
	in, err := install(t, s, src, plugin.Options{Confirm: yes})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(canary); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("installing ran something of the plugin: %v", err)
	}
	if err := in.Verify(); err != nil {
		t.Fatal(err)
	}
	r := in.Receipt
	if r.Trust != plugin.TrustLocal || r.Source.Path != src || r.Consented.Runtime[0] != "./run.sh" || r.TreeSHA256 == "" {
		t.Errorf("receipt %+v", r)
	}
	for p, want := range map[string]os.FileMode{in.Dir: 0o700, filepath.Join(in.Dir, "run.sh"): 0o700,
		filepath.Join(in.Dir, "Makefile"): 0o600, filepath.Join(in.Dir, "data"): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want mode %v", p, fi.Mode(), err, want)
		}
	}
}

func TestInstallNeedsConsent(t *testing.T) {
	t.Parallel()
	src := canaryPlugin(t, filepath.Join(t.TempDir(), "c"), manifest("consent", "1.0.0", `[core]
inherit = ["sandbox_limits"]`))
	s := &plugin.Store{Dir: t.TempDir()}
	_, err := install(t, s, src, plugin.Options{})
	if !errors.Is(err, plugin.ErrConsent) || !strings.Contains(err.Error(), "./run.sh") ||
		!strings.Contains(err.Error(), "WARNING: it receives these xbot settings: sandbox_limits") {
		t.Fatalf("install without consent: %v; want ErrConsent with the screen", err)
	}
	if _, err := s.Get("consent"); !errors.Is(err, plugin.ErrNotInstalled) {
		t.Errorf("a refused install left the plugin: %v", err)
	}
	if _, err := install(t, s, src, plugin.Options{Confirm: func(string) (bool, error) { return false, nil }}); !errors.Is(err, plugin.ErrConsent) {
		t.Errorf("declined: %v", err)
	}
}

func TestUnsafeSourcesRefused(t *testing.T) {
	t.Parallel()
	cases := map[string]func(dir string) error{
		"symlink":     func(dir string) error { return os.Symlink("/etc/passwd", filepath.Join(dir, "lib", "passwd")) },
		"dir symlink": func(dir string) error { return os.Symlink("/etc", filepath.Join(dir, "etc")) },
		"hard link": func(dir string) error {
			return os.Link(filepath.Join(dir, "run.sh"), filepath.Join(dir, "lib", "again.sh"))
		},
		"fifo": func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "lib", "fifo"), 0o600) },
		"big file": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 10<<20+1), 0o600)
		},
		"many dirs":    manyDirs,
		"case clash":   func(dir string) error { return os.WriteFile(filepath.Join(dir, "lib", "Helper.txt"), nil, 0o600) },
		"outside":      func(dir string) error { return rewrite(dir, `command = ["../../bin/sh"]`) },
		"absolute":     func(dir string) error { return rewrite(dir, `command = ["/bin/sh", "-c", "x"]`) },
		"shell":        func(dir string) error { return rewrite(dir, `command = ["./run.bat"]`) },
		"missing prog": func(dir string) error { return rewrite(dir, `command = ["./nope"]`) },
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src := canaryPlugin(t, filepath.Join(t.TempDir(), "c"), manifest("unsafe", "1.0.0", ""))
			if err := spoil(src); err != nil {
				t.Fatal(err)
			}
			s := &plugin.Store{Dir: t.TempDir()}
			_, err := install(t, s, src, plugin.Options{Confirm: yes})
			if !errors.Is(err, plugin.ErrUnsafe) && !errors.Is(err, plugin.ErrManifest) {
				t.Fatalf("install: %v, want ErrUnsafe or ErrManifest", err)
			}
			if entries, _ := os.ReadDir(filepath.Join(s.Dir, ".staging")); len(entries) != 0 {
				t.Errorf("staging left behind: %v", entries)
			}
		})
	}
}

// manyDirs adds 2001 directories, empty but each one staged.
func manyDirs(dir string) error {
	for i := range 2001 {
		if err := os.MkdirAll(filepath.Join(dir, "d", strconv.Itoa(i)), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// rewrite replaces the manifest's command line.
func rewrite(dir, command string) error {
	p := filepath.Join(dir, "xbot-provider.toml")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	return os.WriteFile(p, []byte(strings.Replace(string(data), `command = ["./run.sh"]`, command, 1)), 0o600)
}

func TestTamperedTreeRefused(t *testing.T) {
	t.Parallel()
	src := canaryPlugin(t, filepath.Join(t.TempDir(), "c"), manifest("tamper", "1.0.0", ""))
	for name, spoil := range map[string]func(dir string) error{
		"edited": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\nevil\n"), 0o700)
		},
		"added":    func(dir string) error { return os.WriteFile(filepath.Join(dir, "lib", "new"), nil, 0o600) },
		"removed":  func(dir string) error { return os.Remove(filepath.Join(dir, "Makefile")) },
		"chmod +x": func(dir string) error { return os.Chmod(filepath.Join(dir, "Makefile"), 0o700) },
		"symlink":  func(dir string) error { return os.Symlink("/etc/passwd", filepath.Join(dir, "lib", "p")) },
		"data symlink": func(dir string) error {
			if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
				return err
			}
			return os.Symlink("/etc", filepath.Join(dir, "data"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			in, err := install(t, &plugin.Store{Dir: t.TempDir()}, src, plugin.Options{Confirm: yes})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(in.Dir, "data", "state"), []byte("the plugin's own"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := in.Verify(); err != nil {
				t.Fatalf("the plugin's data/ changed the digest: %v", err)
			}
			if err := spoil(in.Dir); err != nil {
				t.Fatal(err)
			}
			if err := in.Verify(); !errors.Is(err, plugin.ErrTampered) {
				t.Fatalf("Verify of a tree %s after install: %v, want ErrTampered", name, err)
			}
		})
	}
}

func TestTreeDigestFormula(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, c := range map[string]struct {
		data string
		mode os.FileMode
	}{"b/x.sh": {"run", 0o755}, "a.txt": {"hello", 0o644}, "data/ignored": {"state", 0o600}, ".xbot-install.json": {"{}", 0o600}} {
		_ = os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(c.data), c.mode); err != nil {
			t.Fatal(err)
		}
	}
	hexsum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := hexsum("a.txt\x00-\x00" + hexsum("hello") + "\n" + "b/x.sh\x00x\x00" + hexsum("run") + "\n")
	if got, err := plugin.TreeDigest(dir); err != nil || got != want {
		t.Errorf("TreeDigest = %s, %v; want %s", got, err, want)
	}
}

func testSpec() compute.Spec {
	return compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}, SessionID: "s", RunID: "r"}
}
