package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Version is one stored skill version.
type Version struct {
	profile.SkillVersion
	// Files and Bytes count the version's regular files and their bytes.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// AddedAt is when the version was added (Unix milliseconds).
	AddedAt int64 `json:"addedAt"`
}

// Errors.
var (
	// ErrNotFound: no stored version of the skill matches.
	ErrNotFound = errors.New("skill version not found")
	// ErrImmutable: the version exists with other content.
	ErrImmutable = errors.New("skill version exists with other content; versions are immutable")
	// ErrInvalid: the skill's files or SKILL.md are not acceptable.
	ErrInvalid = errors.New("invalid skill")
	// ErrTampered: a stored version's files no longer match its digest.
	ErrTampered = errors.New("skill version's files do not match its digest")
)

// Store is a skill store in a directory. It is safe for concurrent use, by
// several processes too.
type Store struct {
	dir string
	// limits bound what Add accepts.
	limits Limits

	mu       sync.Mutex
	verified map[string]fingerprint // version id → the stat fingerprint its digest was checked at
}

// Limits bound one skill version.
type Limits struct {
	// MaxBytes bounds the bytes of its files. Default 64 MiB.
	MaxBytes int64
	// MaxFiles bounds its files and directories. Default 10,000.
	MaxFiles int
}

// Default limits: a skill is instructions, scripts and small assets; a
// version is mounted into every sandbox of the runs that use it.
const (
	DefaultMaxBytes = 64 << 20
	DefaultMaxFiles = 10000
)

func (l *Limits) setDefaults() {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
}

// New returns the store in dir (absolute or relative; created by the first
// Add). Reading a store that does not exist yet finds no skill.
func New(dir string, limits Limits) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("skill store %s: %w", dir, err)
	}
	limits.setDefaults()
	return &Store{dir: abs, limits: limits, verified: map[string]fingerprint{}}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Path returns the host directory holding version v's files.
func (s *Store) Path(v profile.SkillVersion) string {
	return filepath.Join(s.dir, v.Name, v.Version)
}

// List returns every stored version, by name and then version.
func (s *Store) List() ([]Version, error) {
	names, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("skill store: %w", err)
	}
	var out []Version
	for _, n := range names {
		if !n.IsDir() || !profile.SkillNamePattern.MatchString(n.Name()) {
			continue
		}
		vs, err := s.versions(n.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// versions returns the stored versions of skill name, oldest version first.
func (s *Store) versions(name string) ([]Version, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("skill store: %w", err)
	}
	var out []Version
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), manifestExt) {
			continue
		}
		v, err := s.manifest(name, strings.TrimSuffix(e.Name(), manifestExt))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b Version) int {
		return semver.MustParse(a.Version).Compare(semver.MustParse(b.Version))
	})
	return out, nil
}

// manifestExt ends a version's manifest file.
const manifestExt = ".json"

// manifest reads the manifest of name@version.
func (s *Store) manifest(name, version string) (Version, error) {
	raw, err := os.ReadFile(filepath.Join(s.dir, name, version+manifestExt))
	if err != nil {
		return Version{}, fmt.Errorf("skill %s@%s: %w", name, version, err)
	}
	var v Version
	if err := json.Unmarshal(raw, &v); err != nil {
		return Version{}, fmt.Errorf("skill %s@%s: manifest: %w", name, version, err)
	}
	if v.Name != name || v.Version != version || v.ID != profile.SkillVersionID(name, version) {
		return Version{}, fmt.Errorf("skill %s@%s: the manifest names %s", name, version, v.ID)
	}
	if _, err := semver.StrictNewVersion(v.Version); err != nil {
		return Version{}, fmt.Errorf("skill %s@%s: %w", name, version, err)
	}
	return v, nil
}

// Resolve returns the newest stored version of ref's skill that its range
// allows, after checking its files against its digest.
func (s *Store) Resolve(ref profile.SkillRef) (profile.SkillVersion, error) {
	c, err := ref.Constraint()
	if err != nil {
		return profile.SkillVersion{}, err
	}
	vs, err := s.versions(ref.Name)
	if err != nil {
		return profile.SkillVersion{}, err
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if c.Check(semver.MustParse(vs[i].Version)) {
			if err := s.Verify(vs[i].SkillVersion); err != nil {
				return profile.SkillVersion{}, err
			}
			return vs[i].SkillVersion, nil
		}
	}
	if len(vs) == 0 {
		return profile.SkillVersion{}, fmt.Errorf("skill %s: %w: the store has no version of it", ref.Name, ErrNotFound)
	}
	return profile.SkillVersion{}, fmt.Errorf("skill %s: %w: no version in range %q (the store has %s)",
		ref.Name, ErrNotFound, ref.Version, versionList(vs))
}

func versionList(vs []Version) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Version
	}
	return strings.Join(out, ", ")
}

// Verify checks that v's files are in the store and match its digest
// (ErrTampered when they do not). Files unchanged since this store last
// checked them (by their stat fingerprint: sizes, count, modification and
// change times) are not read again.
func (s *Store) Verify(v profile.SkillVersion) error {
	dir := s.Path(v)
	fp, err := fingerprintOf(dir)
	if err != nil {
		return fmt.Errorf("skill %s: %w", v.ID, err)
	}
	s.mu.Lock()
	ok := s.verified[v.ID] == fp
	s.mu.Unlock()
	if ok {
		return nil
	}
	sum, err := digest(dir)
	if err != nil {
		return fmt.Errorf("skill %s: %w", v.ID, err)
	}
	if sum.Digest != v.Digest {
		return fmt.Errorf("skill %s: %w", v.ID, ErrTampered)
	}
	s.mu.Lock()
	s.verified[v.ID] = fp
	s.mu.Unlock()
	return nil
}

// fingerprint summarises a directory's stat data: a changed, added or
// removed file changes it.
type fingerprint struct {
	entries int
	bytes   int64
	newest  time.Time // the latest modification or change time
}

func fingerprintOf(dir string) (fingerprint, error) {
	var fp fingerprint
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fp.entries++
		fp.bytes += fi.Size()
		if t := changeTime(fi); t.After(fp.newest) {
			fp.newest = t
		}
		return nil
	})
	return fp, err
}
