package skills_test

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/skills"
)

// writeTarGzEntries writes a tar.gz of SKILL.md followed by headers, each
// with its content.
func writeTarGzEntries(t *testing.T, headers []*tar.Header, contents []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "skill.tgz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	md := skillMD("1.0.0")
	headers = append([]*tar.Header{{Name: "SKILL.md", Mode: 0o644, Size: int64(len(md)), Typeflag: tar.TypeReg}}, headers...)
	contents = append([]string{md}, contents...)
	for i, h := range headers {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(contents[i])); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []interface{ Close() error }{tw, gz, f} {
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestArchivesWithLinksDevicesOrEndlessHeadersAreRefused(t *testing.T) {
	t.Parallel()
	s := newStoreWith(t, skills.Limits{MaxBytes: 4 << 10, MaxFiles: 8})
	global := func(value string) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "g", PAXRecords: map[string]string{"comment": value}}
	}
	var manyGlobals []*tar.Header
	for range 20 {
		manyGlobals = append(manyGlobals, global("x"))
	}
	zipLink := filepath.Join(t.TempDir(), "link.zip")
	f, err := os.Create(zipLink)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	hdr := &zip.FileHeader{Name: "passwd"}
	hdr.SetMode(os.ModeSymlink | 0o777)
	if w, err := zw.CreateHeader(hdr); err != nil {
		t.Fatal(err)
	} else if _, err := w.Write([]byte("/etc/passwd")); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	for name, src := range map[string]string{
		"a hard link":       writeTarGzEntries(t, []*tar.Header{{Name: "l", Typeflag: tar.TypeLink, Linkname: "SKILL.md"}}, []string{""}),
		"a symlink":         writeTarGzEntries(t, []*tar.Header{{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}}, []string{""}),
		"a device":          writeTarGzEntries(t, []*tar.Header{{Name: "d", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}}, []string{""}),
		"a zip symlink":     zipLink,
		"endless headers":   writeTarGzEntries(t, manyGlobals, make([]string, len(manyGlobals))),
		"an outsize header": writeTarGzEntries(t, []*tar.Header{global(strings.Repeat("x", 200<<10))}, []string{""}),
	} {
		if _, _, err := s.Add(src, ""); !errors.Is(err, skills.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if all, err := s.List(); err != nil || len(all) != 0 {
		t.Errorf("stored %+v, %v", all, err)
	}
}

// TestConcurrentAddsOfOneVersionStoreItOnce: adds of the same version at
// once (processes share the store's lock file; so do goroutines, each with
// its own descriptor) store it once; other content under it is refused.
func TestConcurrentAddsOfOneVersionStoreItOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	same := writeSkill(t, map[string]string{"SKILL.md": skillMD("1.0.0"), "a.txt": "a"})
	other := writeSkill(t, map[string]string{"SKILL.md": skillMD("1.0.0"), "a.txt": "b"})
	type outcome struct {
		v     skills.Version
		added bool
		err   error
	}
	results := make([]outcome, 8)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			src := same
			if i%2 == 1 {
				src = other
			}
			v, added, err := s.Add(src, "")
			results[i] = outcome{v, added, err}
		})
	}
	wg.Wait()
	stored, err := s.Resolve(profile.SkillRef{Name: "demo", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	added := 0
	for i, r := range results {
		switch {
		case r.err == nil && r.v.Digest == stored.Digest:
			if r.added {
				added++
			}
		case errors.Is(r.err, skills.ErrImmutable):
		default:
			t.Errorf("add %d: %+v", i, r)
		}
	}
	if added != 1 {
		t.Errorf("%d adds stored the version, want 1", added)
	}
	if entries, err := os.ReadDir(filepath.Join(s.Dir(), ".staging")); err != nil || len(entries) != 0 {
		t.Errorf("the staging directory holds %d entries (%v)", len(entries), err)
	}
}
