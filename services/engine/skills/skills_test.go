package skills_test

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/skills"
)

// skillMD is a SKILL.md naming skill demo at version.
func skillMD(version string) string {
	return "---\nname: demo\ndescription: Shows how skills work.\nversion: " + version + "\n---\n# Demo\nRun scripts/run.sh.\n"
}

// writeSkill writes a skill directory with files (path → content).
func writeSkill(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func newStore(t *testing.T) *skills.Store {
	t.Helper()
	return newStoreWith(t, skills.Limits{})
}

// newStoreWith is a store in a directory of the test, made writable again
// before the test's directories are removed (versions are read-only).
func newStoreWith(t *testing.T, limits skills.Limits) *skills.Store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o700)
			}
			return nil
		})
	})
	s, err := skills.New(dir, limits)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAddedVersionIsReadOnlyAndResolvedByRange(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	v1, added, err := s.Add(writeSkill(t, map[string]string{"SKILL.md": skillMD("1.0.0"), "scripts/run.sh": "echo hi\n"}), "")
	if err != nil || !added {
		t.Fatalf("add 1.0.0: %v (added %v)", err, added)
	}
	if v1.ID != "demo@1.0.0" || v1.Files != 2 || !strings.HasPrefix(v1.Digest, "sha256:") || v1.Description != "Shows how skills work." {
		t.Fatalf("version %+v", v1)
	}
	dir := s.Path(v1.SkillVersion)
	if fi, err := os.Stat(filepath.Join(dir, "scripts", "run.sh")); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("run.sh: %v %v, want 0555", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "SKILL.md")); err != nil || fi.Mode().Perm() != 0o444 {
		t.Errorf("SKILL.md: %v %v, want 0444", fi.Mode(), err)
	}
	if _, _, err := s.Add(writeSkill(t, map[string]string{"SKILL.md": skillMD("1.2.0")}), ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Add(writeSkill(t, map[string]string{"SKILL.md": skillMD("2.0.0")}), ""); err != nil {
		t.Fatal(err)
	}
	for rng, want := range map[string]string{"": "2.0.0", "^1": "1.2.0", "~1.0": "1.0.0", "1.0.0": "1.0.0", ">=1.1, <3": "2.0.0"} {
		got, err := s.Resolve(profile.SkillRef{Name: "demo", Version: rng})
		if err != nil || got.Version != want {
			t.Errorf("range %q resolved %+v, %v; want %s", rng, got, err, want)
		}
	}
	if _, err := s.Resolve(profile.SkillRef{Name: "demo", Version: "^3"}); !errors.Is(err, skills.ErrNotFound) ||
		!strings.Contains(err.Error(), "1.0.0, 1.2.0, 2.0.0") {
		t.Errorf("a range with no version: %v", err)
	}
	all, err := s.List()
	if err != nil || len(all) != 3 || all[0].Version != "1.0.0" || all[2].Version != "2.0.0" {
		t.Errorf("list %+v %v", all, err)
	}
}

func TestVersionsAreImmutable(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	src := writeSkill(t, map[string]string{"SKILL.md": skillMD("1.0.0")})
	first, _, err := s.Add(src, "")
	if err != nil {
		t.Fatal(err)
	}
	again, added, err := s.Add(src, "")
	if err != nil || added || again.Digest != first.Digest {
		t.Errorf("adding the same content again: %+v added=%v %v", again, added, err)
	}
	other := writeSkill(t, map[string]string{"SKILL.md": skillMD("1.0.0"), "extra.txt": "x"})
	if _, _, err := s.Add(other, ""); !errors.Is(err, skills.ErrImmutable) {
		t.Errorf("other content under a stored version: %v, want ErrImmutable", err)
	}
	// A stored file changed behind the store's back is refused at resolution.
	file := filepath.Join(s.Path(first.SkillVersion), "SKILL.md")
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(skillMD("1.0.0")+"tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resolve(profile.SkillRef{Name: "demo"}); !errors.Is(err, skills.ErrTampered) {
		t.Errorf("resolving a tampered version: %v, want ErrTampered", err)
	}
}

func TestArchivesAreAddedAndBadSkillsRefused(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	tgz := filepath.Join(t.TempDir(), "skill.tgz")
	writeTarGz(t, tgz, map[string]string{"demo/SKILL.md": skillMD(""), "demo/ref/notes.md": "notes"})
	v, _, err := s.Add(tgz, "0.3.1")
	if err != nil || v.ID != "demo@0.3.1" || v.Files != 2 {
		t.Fatalf("tar.gz: %+v %v", v, err)
	}
	zipped := filepath.Join(t.TempDir(), "skill.zip")
	writeZip(t, zipped, map[string]string{"SKILL.md": skillMD("0.4.0")})
	if v, _, err := s.Add(zipped, ""); err != nil || v.Version != "0.4.0" {
		t.Fatalf("zip: %+v %v", v, err)
	}
	evil := filepath.Join(t.TempDir(), "evil.tgz")
	writeTarGz(t, evil, map[string]string{"SKILL.md": skillMD("9.0.0"), "../escape": "x"})
	link := writeSkill(t, map[string]string{"SKILL.md": skillMD("9.0.1")})
	if err := os.Symlink("/etc/passwd", filepath.Join(link, "passwd")); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"a member outside the skill": evil, "a symlink": link,
		"no SKILL.md":            writeSkill(t, map[string]string{"README.md": "x"}),
		"no version":             writeSkill(t, map[string]string{"SKILL.md": skillMD("")}),
		"a name that is no path": writeSkill(t, map[string]string{"SKILL.md": strings.Replace(skillMD("1.0.0"), "name: demo", "name: ../x", 1)}),
	} {
		if _, _, err := s.Add(src, ""); !errors.Is(err, skills.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Dir()), "escape")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the archive wrote outside the store: %v", err)
	}
}

func TestAddRefusesASkillOverItsLimits(t *testing.T) {
	t.Parallel()
	s := newStoreWith(t, skills.Limits{MaxBytes: 1000, MaxFiles: 3})
	big := writeSkill(t, map[string]string{"SKILL.md": skillMD("1.0.0"), "big.bin": strings.Repeat("x", 2000)})
	many := writeSkill(t, map[string]string{"SKILL.md": skillMD("1.0.0"), "a": "", "b": "", "c": ""})
	for name, src := range map[string]string{"too many bytes": big, "too many files": many} {
		if _, _, err := s.Add(src, ""); !errors.Is(err, skills.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestADescriptionWithTerminalControlsIsRefused(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for name, desc := range map[string]string{"escape": `"Shows \e[2J\e[31mhow"`, "bidi override": "\"Shows \u202ehow\""} {
		md := strings.Replace(skillMD("1.0.0"), "description: Shows how skills work.", "description: "+desc, 1)
		if _, _, err := s.Add(writeSkill(t, map[string]string{"SKILL.md": md}), ""); !errors.Is(err, skills.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	folded := strings.Replace(skillMD("1.0.0"), "description: Shows how skills work.", "description: |\n  Shows how\n  skills work.", 1)
	if _, _, err := s.Add(writeSkill(t, map[string]string{"SKILL.md": folded}), ""); err != nil {
		t.Errorf("a description of two lines: %v", err)
	}
}

func writeTarGz(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for name, content := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
