package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// staleStaging is how old a staging directory of an add that never
// finished (its process died) must be before another add removes it; no
// add takes this long.
const staleStaging = time.Hour

// Add stores the skill at src, a directory or a tar, tar.gz or zip archive,
// as a new version. version is used when SKILL.md declares none ("" =
// SKILL.md must). It returns the version and whether it was new: adding
// the same content again returns the stored version; other content under
// a stored version fails with ErrImmutable.
func (s *Store) Add(src, version string) (Version, bool, error) {
	if err := os.MkdirAll(s.stagingDir(), 0o755); err != nil { // #nosec G301 -- the sandbox user reads the store
		return Version{}, false, fmt.Errorf("skill store: %w", err)
	}
	stage, err := os.MkdirTemp(s.stagingDir(), "add-")
	if err != nil {
		return Version{}, false, fmt.Errorf("skill store: %w", err)
	}
	defer func() { _ = removeTree(stage) }()
	root, err := s.fill(stage, src)
	if err != nil {
		return Version{}, false, err
	}
	fm, err := readFrontMatter(root)
	if err != nil {
		return Version{}, false, err
	}
	sv, err := versionOf(fm, version)
	if err != nil {
		return Version{}, false, err
	}
	sum, err := digest(root)
	if err != nil {
		return Version{}, false, err
	}
	sv.Digest = sum.Digest
	v := Version{SkillVersion: sv, Files: sum.Files, Bytes: sum.Bytes, AddedAt: time.Now().UnixMilli()}
	return s.commit(root, v)
}

// stagingDir holds adds in progress, inside the store so that a rename
// puts a version in place atomically. Its name is no skill's.
func (s *Store) stagingDir() string { return filepath.Join(s.dir, ".staging") }

// fill copies or extracts src into stage and returns the skill's root: stage,
// or its only directory when that holds SKILL.md (an archive of a folder).
func (s *Store) fill(stage, src string) (string, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("skill source: %w", err)
	}
	b := &budget{limits: s.limits}
	if fi.IsDir() {
		err = copyTree(src, stage, b)
	} else {
		err = extract(src, stage, b)
	}
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(stage, InstructionsFile)); err == nil {
		return stage, nil
	}
	entries, err := os.ReadDir(stage)
	if err == nil && len(entries) == 1 && entries[0].IsDir() {
		return filepath.Join(stage, entries[0].Name()), nil
	}
	return stage, nil // readFrontMatter says what is missing
}

// commit puts the version at root in place under the store's lock.
func (s *Store) commit(root string, v Version) (Version, bool, error) {
	unlock, err := s.lock()
	if err != nil {
		return Version{}, false, err
	}
	defer unlock()
	s.removeStale()
	if old, err := s.manifest(v.Name, v.Version); err == nil {
		if old.Digest != v.Digest {
			return Version{}, false, fmt.Errorf("skill %s (stored %s, adding %s): %w", v.ID, old.Digest, v.Digest, ErrImmutable)
		}
		return old, false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Version{}, false, err
	}
	dst := s.Path(v.SkillVersion)
	// A directory without a manifest is what an add that died left: adds
	// hold the lock, so none is in progress.
	if err := removeTree(dst); err != nil {
		return Version{}, false, fmt.Errorf("skill %s: %w", v.ID, err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil { // #nosec G301 -- the sandbox user reads the store
		return Version{}, false, fmt.Errorf("skill %s: %w", v.ID, err)
	}
	// Moved while still writable: moving a directory to another parent
	// rewrites its "..", which needs write permission on it (for a store
	// not owned by root). Readers see it only once its manifest exists.
	if err := os.Rename(root, dst); err != nil {
		return Version{}, false, fmt.Errorf("skill %s: %w", v.ID, err)
	}
	if err := makeReadOnly(dst); err != nil {
		return Version{}, false, fmt.Errorf("skill %s: %w", v.ID, err)
	}
	if err := s.writeManifest(v); err != nil {
		return Version{}, false, err
	}
	return v, true, nil
}

// writeManifest writes v's manifest through a temporary file and a
// rename, so that it appears whole.
func (s *Store) writeManifest(v Version) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("skill %s: %w", v.ID, err)
	}
	final := filepath.Join(s.dir, v.Name, v.Version+manifestExt)
	tmp, err := os.CreateTemp(s.stagingDir(), "manifest-")
	if err != nil {
		return fmt.Errorf("skill %s: %w", v.ID, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	_, err = tmp.Write(raw)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o444) // #nosec G302 -- readers of the store are meant to read it
	}
	if err == nil {
		err = os.Rename(tmp.Name(), final)
	}
	if err != nil {
		return fmt.Errorf("skill %s: manifest: %w", v.ID, err)
	}
	return nil
}

// lock takes the store's lock file (flock), which serialises adds across
// processes.
func (s *Store) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("skill store lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil { // #nosec G115 -- a descriptor fits an int
		_ = f.Close()
		return nil, fmt.Errorf("skill store lock: %w", err)
	}
	return func() { _ = f.Close() }, nil // closing releases the lock
}

// removeStale removes what adds that died left in the staging directory.
func (s *Store) removeStale() {
	entries, err := os.ReadDir(s.stagingDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleStaging {
			_ = removeTree(filepath.Join(s.stagingDir(), e.Name()))
		}
	}
}

// makeReadOnly makes every file under dir read-only (0444, or 0555 when
// executable) and every directory 0555, children first, through an os.Root
// of dir.
func makeReadOnly(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	var dirs []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := os.FileMode(0o444)
		if fi.Mode()&0o111 != 0 {
			mode = 0o555
		}
		return root.Chmod(p, mode)
	})
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		err = root.Chmod(dirs[i], 0o555)
	}
	return err
}

// removeTree removes dir and everything below it, making its read-only
// directories writable first (through an os.Root of dir). A missing dir is
// not an error.
func removeTree(dir string) error {
	if root, err := os.OpenRoot(dir); err == nil {
		_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = root.Chmod(p, 0o700) // #nosec G302 -- a directory the owner empties next
			}
			return nil
		})
		_ = root.Close()
	}
	return os.RemoveAll(dir)
}
