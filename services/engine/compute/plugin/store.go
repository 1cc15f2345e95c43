package plugin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Store is the directory of installed plugins: <Dir>/<id>/ each, with the
// lock file .lock, the work directories .staging and .trash, and .kept
// (the manifests of plugins removed without --purge, whose settings stay).
type Store struct {
	// Dir is the store's directory (created 0700). Required.
	Dir string
}

// Installed is one installed plugin.
type Installed struct {
	Dir      string
	Manifest *Manifest
	Receipt  *Receipt
}

// ID is the provider's id.
func (in *Installed) ID() string { return in.Manifest.Provider.ID }

// Get reads the installed plugin id (its manifest and receipt; the digest
// is checked by Verify).
func (s *Store) Get(id string) (*Installed, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.Dir, id)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) { // #nosec G703 -- id passed CheckID
		return nil, fmt.Errorf("%w: %s", ErrNotInstalled, id)
	}
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile)) // #nosec G304 G703 -- the store's own file
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", id, err)
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", id, err)
	}
	r, err := readReceipt(dir)
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", id, err)
	}
	if m.Provider.ID != id || r.ID != id {
		return nil, fmt.Errorf("provider %s: its manifest or receipt names another id: %w", id, ErrTampered)
	}
	return &Installed{Dir: dir, Manifest: m, Receipt: r}, nil
}

// List returns the installed plugins by id; one that cannot be read is
// reported in the error and left out.
func (s *Store) List() ([]*Installed, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Installed
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || CheckID(e.Name()) != nil {
			continue
		}
		in, err := s.Get(e.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, in)
	}
	return out, errors.Join(errs...)
}

// Kept returns the manifests of plugins removed without purge: their
// settings stay, and stay known.
func (s *Store) Kept() ([]*Manifest, error) {
	entries, err := os.ReadDir(filepath.Join(s.Dir, ".kept"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []*Manifest
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(s.Dir, ".kept", e.Name())) // #nosec G304 -- the store's own file
		if err != nil {
			continue
		}
		if m, err := ParseManifest(data); err == nil {
			out = append(out, m)
		}
	}
	return out, err
}

// Verify checks that the installed tree is still what was installed: its
// digest and its manifest's are the receipt's, and the consent recorded
// covers what the manifest asks.
func (in *Installed) Verify() error {
	sum, err := TreeDigest(in.Dir)
	if err != nil {
		return fmt.Errorf("provider %s: %w", in.ID(), err)
	}
	if sum != in.Receipt.TreeSHA256 {
		return fmt.Errorf("provider %s: %w (digest %s, installed %s); reinstall it with xbot provider install --force",
			in.ID(), ErrTampered, short(sum), short(in.Receipt.TreeSHA256))
	}
	if fi, err := os.Lstat(filepath.Join(in.Dir, DataDir)); err == nil && !fi.IsDir() {
		return fmt.Errorf("provider %s: its %s/ is not a directory: %w", in.ID(), DataDir, ErrTampered)
	}
	if changes := in.Receipt.Consented.Changes(consentOf(in.Manifest)); len(changes) > 0 {
		return fmt.Errorf("provider %s: its %v differ from what was consented to: %w", in.ID(), changes, ErrTampered)
	}
	return nil
}

func short(sum string) string { return sum[:min(12, len(sum))] }

// Remove deletes plugin id. Without purge its manifest is kept in .kept so
// that its saved settings stay known (config files are the caller's).
func (s *Store) Remove(id string, purge bool) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	in, err := s.Get(id)
	if err != nil {
		if purge && errors.Is(err, ErrNotInstalled) {
			return s.forget(id)
		}
		return err
	}
	manifest, err := os.ReadFile(filepath.Join(in.Dir, ManifestFile)) // #nosec G304 -- the store's own file
	if err != nil {
		return fmt.Errorf("remove provider %s: %w", id, err)
	}
	trash := filepath.Join(s.Dir, ".trash", fmt.Sprintf("%s-%d", id, time.Now().UnixNano()))
	if err := os.Rename(in.Dir, trash); err != nil {
		return fmt.Errorf("remove provider %s: %w", id, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("remove provider %s: %w", id, err)
	}
	if purge {
		return s.forget(id)
	}
	return os.WriteFile(filepath.Join(s.Dir, ".kept", id+".toml"), manifest, 0o600) // #nosec G703 -- id passed CheckID
}

func (s *Store) forget(id string) error {
	err := os.Remove(filepath.Join(s.Dir, ".kept", id+".toml"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// lock takes the store's lock (flock on .lock), creating the store's
// directories; a second installer waits.
func (s *Store) lock() (func(), error) {
	for _, d := range []string{s.Dir, filepath.Join(s.Dir, ".staging"), filepath.Join(s.Dir, ".trash"), filepath.Join(s.Dir, ".kept")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("provider store: %w", err)
		}
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("provider store lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("provider store lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}

// Secrets are the names of m's secret fields.
func (m *Manifest) Secrets() []string {
	var out []string
	for name := range m.Config.Fields {
		if m.Secret(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
