package plugin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Source is where to install a plugin from: a local directory, or a git
// repository (URL, optional ref and subdirectory).
type Source struct {
	Dir    string
	GitURL string
	Ref    string
	Subdir string
}

// Options configure an install.
type Options struct {
	// SHA256 pins the tree: the install fails unless its digest is this
	// (hex, in any case, optionally after "sha256:").
	SHA256 string
	// Force replaces an installed plugin of the same id (an update).
	Force bool
	// Interactive says a person reads the consent screen (Confirm asks
	// them); unattended installs refuse unpinned git refs unless
	// AllowUnpinned.
	Interactive, AllowUnpinned bool
	// AllowInsecureTransport admits file://, git:// and http:// sources.
	AllowInsecureTransport bool
	// Confirm is shown the consent screen when consent is needed and says
	// whether the user gives it; nil gives none (ErrConsent).
	Confirm func(screen string) (bool, error)
	// Host names the installing program in the receipt.
	Host Host
	// Check, when set, may refuse the parsed manifest before consent is
	// asked (e.g. a setting whose variable another provider has).
	Check func(*Manifest) error
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Install stages src, checks it, asks for consent and swaps it in under
// the store's lock. Nothing of the plugin runs.
func (s *Store) Install(ctx context.Context, src Source, opt Options) (*Installed, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	stage, err := os.MkdirTemp(filepath.Join(s.Dir, ".staging"), "install-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(stage) }()
	tree := filepath.Join(stage, "tree")
	if err := os.Mkdir(tree, 0o700); err != nil {
		return nil, err
	}
	origin, err := fetch(ctx, src, tree, opt)
	if err != nil {
		return nil, err
	}
	r, m, err := s.check(tree, origin, opt)
	if err != nil {
		return nil, err
	}
	if err := s.consent(m, r, opt); err != nil {
		return nil, err
	}
	if err := writeReceipt(tree, r); err != nil {
		return nil, err
	}
	return s.swap(stage, tree, m.Provider.ID)
}

// fetch copies the source into tree.
func fetch(ctx context.Context, src Source, tree string, opt Options) (Origin, error) {
	if src.GitURL != "" {
		return fetchGit(ctx, src, tree, opt.AllowInsecureTransport)
	}
	abs, err := filepath.Abs(src.Dir)
	if err != nil {
		return Origin{}, err
	}
	if fi, err := os.Lstat(abs); err != nil || !fi.IsDir() {
		return Origin{}, fmt.Errorf("%w: %s is not a directory", ErrUnsafe, src.Dir)
	}
	return Origin{Type: "local", Path: abs}, copyTree(abs, tree)
}

// check parses the staged manifest, makes sure its program is a file of
// the tree, computes the digests and the trust, and builds the receipt.
func (s *Store) check(tree string, origin Origin, opt Options) (*Receipt, *Manifest, error) {
	data, err := os.ReadFile(filepath.Join(tree, ManifestFile)) // #nosec G304 -- the staged tree
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: no %s at the plugin's root (for a plugin in a repository's subdirectory, give --subdir)", ErrManifest, ManifestFile)
	}
	if err != nil {
		return nil, nil, err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, nil, err
	}
	if opt.Check != nil {
		if err := opt.Check(m); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrManifest, err)
		}
	}
	if prog := m.Runtime.Command[0]; strings.HasPrefix(prog, "./") || strings.HasPrefix(prog, "../") {
		fi, err := os.Lstat(filepath.Join(tree, filepath.FromSlash(prog)))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o100 == 0 {
			return nil, nil, fmt.Errorf("%w: runtime.command %s is not an executable file of the plugin", ErrManifest, prog)
		}
	}
	r, err := receiptOf(tree, m, origin, opt)
	if err != nil {
		return nil, nil, err
	}
	if r.Trust == TrustUnpinned && !opt.Interactive && !opt.AllowUnpinned {
		return nil, nil, fmt.Errorf("%w: %s at %q may move (commit %s); pin it with --ref %s or --sha256 %s, or pass --allow-unpinned",
			ErrConsent, origin.URL, origin.Ref, origin.Commit, origin.Commit, r.TreeSHA256)
	}
	return r, m, nil
}

// receiptOf digests the staged tree (refusing it when --sha256 names
// another digest) and builds its receipt.
func receiptOf(tree string, m *Manifest, origin Origin, opt Options) (*Receipt, error) {
	sum, err := TreeDigest(tree)
	if err != nil {
		return nil, err
	}
	if want := pinnedDigest(opt.SHA256); want != "" && want != sum {
		return nil, fmt.Errorf("%w: the source's tree digest is %s, not %s", ErrDigest, sum, want)
	}
	msum, err := Sha256File(filepath.Join(tree, ManifestFile))
	if err != nil {
		return nil, err
	}
	return &Receipt{ReceiptVersion: 1, ID: m.Provider.ID, Version: m.Provider.Version, Source: origin, TreeSHA256: sum,
		ManifestSHA256: msum, Trust: trust(origin, opt), Consented: consentOf(m), InstalledAt: time.Now().UTC(), InstalledBy: opt.Host}, nil
}

// pinnedDigest is --sha256 as TreeDigest writes it: hex in lower case,
// without the "sha256:" that list and install print before it.
func pinnedDigest(s string) string {
	return strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "sha256:"))
}

func trust(o Origin, opt Options) string {
	switch {
	case opt.SHA256 != "" || (o.Type == "git" && fullCommit.MatchString(o.Ref)):
		return TrustPinned
	case o.Type == "git":
		return TrustUnpinned
	}
	return TrustLocal
}

// consent asks for the user's consent: for a new plugin always; for an
// update when what it runs, touches, supports or inherits changes.
func (s *Store) consent(m *Manifest, r *Receipt, opt Options) error {
	old, err := s.Get(m.Provider.ID)
	switch {
	case err == nil && !opt.Force:
		return fmt.Errorf("%w: %s %s; replace it with --force", ErrInstalled, old.ID(), old.Manifest.Provider.Version)
	case err != nil && !errors.Is(err, ErrNotInstalled):
		if !opt.Force {
			return err
		}
		old = nil // unreadable: replaced as if new, with full consent
	}
	var changes []string
	if old != nil {
		if changes = old.Receipt.Consented.Changes(r.Consented); len(changes) == 0 {
			return nil
		}
	}
	screen := Screen(m, r, old, changes)
	if opt.Confirm == nil {
		return fmt.Errorf("%w:\n%s", ErrConsent, screen)
	}
	ok, err := opt.Confirm(screen)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: declined", ErrConsent)
	}
	return nil
}

// swap moves the staged tree to <Dir>/<id>, keeping the old one's data/;
// on failure the old plugin stays as it was.
func (s *Store) swap(stage, tree, id string) (*Installed, error) {
	dst := filepath.Join(s.Dir, id)
	old := filepath.Join(stage, "old")
	hadOld := false
	if _, err := os.Lstat(dst); err == nil { // #nosec G703 -- id passed CheckID: one path component
		if err := os.Rename(dst, old); err != nil { // #nosec G703 -- as above
			return nil, fmt.Errorf("install %s: %w", id, err)
		}
		hadOld = true
	}
	restore := func(err error) (*Installed, error) {
		if hadOld {
			_ = os.Rename(filepath.Join(tree, DataDir), filepath.Join(old, DataDir))
			_ = os.Rename(old, dst) // #nosec G703 -- id passed CheckID
		}
		return nil, fmt.Errorf("install %s: %w", id, err)
	}
	data := filepath.Join(tree, DataDir)
	if err := os.Rename(filepath.Join(old, DataDir), data); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return restore(err)
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return restore(err)
	}
	if err := os.Rename(tree, dst); err != nil { // #nosec G703 -- as above
		return restore(err)
	}
	_ = os.Remove(filepath.Join(s.Dir, ".kept", id+".toml")) // #nosec G703 -- id passed CheckID
	return s.Get(id)
}
