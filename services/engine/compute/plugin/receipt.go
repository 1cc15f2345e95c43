package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Trust levels: how the user could check what was installed.
const (
	// TrustPinned: the tree's digest (--sha256) or a full commit was given.
	TrustPinned = "pinned"
	// TrustLocal: a local directory, as it was when installed.
	TrustLocal = "local"
	// TrustUnpinned: a git branch or tag, which may move.
	TrustUnpinned = "unpinned"
)

// Receipt is .xbot-install.json: where a plugin came from, the digest of
// what was installed and what the user consented to.
type Receipt struct {
	ReceiptVersion int       `json:"receipt_version"`
	ID             string    `json:"id"`
	Version        string    `json:"version"`
	Source         Origin    `json:"source"`
	TreeSHA256     string    `json:"tree_sha256"`
	ManifestSHA256 string    `json:"manifest_sha256"`
	Trust          string    `json:"trust"`
	Consented      Consent   `json:"consented"`
	InstalledAt    time.Time `json:"installed_at"`
	InstalledBy    Host      `json:"installed_by"`
}

// Origin is where a plugin was installed from.
type Origin struct {
	Type   string `json:"type"` // local | git
	Path   string `json:"path,omitempty"`
	URL    string `json:"url,omitempty"`
	Ref    string `json:"ref,omitempty"`
	Commit string `json:"commit,omitempty"`
	Subdir string `json:"subdir,omitempty"`
}

// Host names the installing program.
type Host struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Consent is what the user agreed to: what runs, what it says it touches,
// its features and the core settings it inherits.
type Consent struct {
	Runtime  []string `json:"runtime"`
	Security Security `json:"security"`
	Features []string `json:"features"`
	Inherit  []string `json:"inherit"`
}

// consentOf is the consent m asks for.
func consentOf(m *Manifest) Consent {
	c := Consent{Runtime: slices.Clone(m.Runtime.Command), Security: m.Security,
		Features: slices.Clone(m.Features.Supported), Inherit: slices.Clone(m.Core.Inherit)}
	for _, s := range [][]string{c.Features, c.Inherit, c.Security.Network, c.Security.Filesystem, c.Security.EnvPassthrough} {
		slices.Sort(s)
	}
	return c
}

// Changes lists what differs between two consents, by part (runtime,
// security, features, inherit); none means no new consent is needed.
func (c Consent) Changes(next Consent) []string {
	var out []string
	same := func(a, b any) bool {
		x, _ := json.Marshal(a)
		y, _ := json.Marshal(b)
		return string(x) == string(y)
	}
	if !same(c.Runtime, next.Runtime) {
		out = append(out, "runtime")
	}
	if !same(c.Security, next.Security) {
		out = append(out, "security")
	}
	if !same(c.Features, next.Features) {
		out = append(out, "features")
	}
	if !same(c.Inherit, next.Inherit) {
		out = append(out, "inherit")
	}
	return out
}

func readReceipt(dir string) (*Receipt, error) {
	data, err := os.ReadFile(filepath.Join(dir, ReceiptFile)) // #nosec G304 G703 -- the store's own file
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	var r Receipt
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("receipt %s: %w", filepath.Join(dir, ReceiptFile), err)
	}
	return &r, nil
}

func writeReceipt(dir string, r *Receipt) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ReceiptFile), append(data, '\n'), 0o600)
}
