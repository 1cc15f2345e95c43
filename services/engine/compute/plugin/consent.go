package plugin

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Screen is the consent screen: what is installed, from where, what runs,
// what it says it touches, its features, the core settings it inherits and
// its settings (secrets marked). For an update it names what changed.
func Screen(m *Manifest, r *Receipt, old *Installed, changes []string) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p := m.Provider
	line("Provider %s %s — %s", p.ID, Printable(p.Version), orNone(Printable(p.Name)))
	if p.Description != "" {
		line("  %s", Printable(p.Description))
	}
	if old != nil {
		line("Replaces version %s; changed: %s", Printable(old.Manifest.Provider.Version), strings.Join(changes, ", "))
	}
	line("Source:    %s", origin(r.Source))
	line("Digest:    sha256:%s (trust: %s)", r.TreeSHA256, r.Trust)
	line("Runs:      %s   (in its directory, as you, with your permissions; xbot does not isolate it)", printables(m.Runtime.Command))
	s := m.Security
	line("Network:   %s", orNone(strings.Join(printableList(s.Network), ", ")))
	line("Files:     %s", orNone(strings.Join(printableList(s.Filesystem), ", ")))
	line("Spawns processes: %t", s.SpawnsProcesses)
	line("Environment passed: %s", strings.TrimSpace("PATH HOME TMPDIR LANG LC_* XBOT_PROVIDER_DATA_DIR PYTHONDONTWRITEBYTECODE "+
		printables(s.EnvPassthrough)))
	line("Features:  %s", strings.Join(m.Features.Supported, ", "))
	if len(m.Core.Inherit) > 0 {
		line("WARNING: it receives these xbot settings: %s", strings.Join(m.Core.Inherit, ", "))
	} else {
		line("Inherits:  no xbot setting")
	}
	line("Settings:  %s", orNone(strings.Join(fieldList(m), ", ")))
	line("Nothing of it has run. It first runs when xbot uses it (compute_provider=%s).", p.ID)
	return b.String()
}

// Printable is s as a terminal shows it harmlessly: quoted with Go escapes
// when it holds a control or format character (an escape sequence, a
// newline, a bidirectional override), as it is otherwise.
func Printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) < 0 {
		return s
	}
	return strconv.QuoteToGraphic(s)
}

func printableList(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = Printable(s)
	}
	return out
}

// printables joins list with spaces, each element Printable.
func printables(list []string) string { return strings.Join(printableList(list), " ") }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func origin(o Origin) string {
	if o.Type == "git" {
		s := Printable(o.URL)
		if o.Subdir != "" {
			s += " //" + Printable(o.Subdir)
		}
		return fmt.Sprintf("%s at %s (commit %s)", s, orNone(Printable(o.Ref)), o.Commit)
	}
	return Printable(o.Path)
}

// fieldList names the settings, marking secrets and credentials.
func fieldList(m *Manifest) []string {
	var out []string
	for name, f := range m.Config.Fields {
		s := fmt.Sprintf("%s (%s, %s)", name, f.Type, EnvName(m.Provider.ID, name))
		if f.Secret || f.Credential {
			s += " [secret]"
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
