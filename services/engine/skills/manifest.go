package skills

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"gopkg.in/yaml.v3"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// InstructionsFile is the file at a skill's root that names and describes
// it (YAML front matter) and holds its instructions.
const InstructionsFile = "SKILL.md"

// maxDescription bounds a skill's description: it is in the model's
// context for every run of every agent that lists the skill.
const maxDescription = 1024

// maxInstructionsBytes bounds the SKILL.md read for its front matter.
const maxInstructionsBytes = 1 << 20

// frontMatter is the YAML header of SKILL.md. Other keys are allowed and
// ignored.
type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Version     string `yaml:"version"`
	Metadata    struct {
		Version string `yaml:"version"`
	} `yaml:"metadata"`
}

// readFrontMatter parses the front matter of root/SKILL.md.
func readFrontMatter(root string) (frontMatter, error) {
	var fm frontMatter
	raw, err := os.ReadFile(filepath.Join(root, InstructionsFile)) // #nosec G304 -- in the staging directory
	if err != nil {
		return fm, fmt.Errorf("%w: %s is missing at the skill's root", ErrInvalid, InstructionsFile)
	}
	if len(raw) > maxInstructionsBytes {
		return fm, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, InstructionsFile, maxInstructionsBytes)
	}
	raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
	rest, ok := bytes.CutPrefix(bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n")), []byte("---\n"))
	if !ok {
		return fm, fmt.Errorf("%w: %s must begin with YAML front matter between --- lines", ErrInvalid, InstructionsFile)
	}
	head, _, ok := bytes.Cut(rest, []byte("\n---"))
	if !ok {
		return fm, fmt.Errorf("%w: %s: the front matter has no closing ---", ErrInvalid, InstructionsFile)
	}
	if err := yaml.Unmarshal(head, &fm); err != nil {
		return fm, fmt.Errorf("%w: %s front matter: %w", ErrInvalid, InstructionsFile, err)
	}
	return fm, nil
}

// versionOf checks the front matter (and the version given to Add, which
// the front matter may leave out but not contradict) and returns the
// version to store, without its digest.
func versionOf(fm frontMatter, given string) (profile.SkillVersion, error) {
	var errs []string
	if !profile.SkillNamePattern.MatchString(fm.Name) {
		errs = append(errs, fmt.Sprintf("name %q must match %s", fm.Name, profile.SkillNamePattern))
	}
	desc := strings.TrimSpace(fm.Description)
	switch {
	case desc == "":
		errs = append(errs, "description is required: it is what the model is told about the skill")
	case len(desc) > maxDescription || !utf8.ValidString(desc):
		errs = append(errs, fmt.Sprintf("description must be UTF-8 text of at most %d bytes", maxDescription))
	case strings.ContainsFunc(desc, hidden):
		errs = append(errs, "description must not hold control characters or bidirectional overrides (it is shown on terminals and in UIs)")
	}
	declared := fm.Version
	if declared == "" {
		declared = fm.Metadata.Version
	}
	v, err := pickVersion(strings.TrimSpace(declared), strings.TrimSpace(given))
	if err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return profile.SkillVersion{}, fmt.Errorf("%w: %s", ErrInvalid, strings.Join(errs, "; "))
	}
	ver := v.String()
	return profile.SkillVersion{ID: profile.SkillVersionID(fm.Name, ver), Name: fm.Name, Version: ver, Description: desc}, nil
}

// pickVersion is the version SKILL.md declares, or the one given to Add
// when it declares none; both must be semantic versions and agree.
func pickVersion(declared, given string) (*semver.Version, error) {
	var g, d *semver.Version
	var err error
	if given != "" {
		if g, err = semver.NewVersion(given); err != nil {
			return nil, fmt.Errorf("the version given, %q, is not a semantic version", given)
		}
	}
	if declared != "" {
		if d, err = semver.NewVersion(declared); err != nil {
			return nil, fmt.Errorf("version %q in %s is not a semantic version", declared, InstructionsFile)
		}
	}
	switch {
	case d == nil && g == nil:
		return nil, fmt.Errorf("a version is required (version in the front matter of %s, or given when adding)", InstructionsFile)
	case d == nil:
		return g, nil
	case g != nil && !g.Equal(d):
		return nil, fmt.Errorf("version %s was given, but %s says %s", g, InstructionsFile, d)
	}
	return d, nil
}

// hidden reports whether r is a control character other than a line break
// or a tab, or a bidirectional override or isolate: text that moves a
// terminal's cursor or reorders what a reader sees.
func hidden(r rune) bool {
	if r == '\n' || r == '\t' {
		return false
	}
	return unicode.IsControl(r) || '\u202a' <= r && r <= '\u202e' || '\u2066' <= r && r <= '\u2069'
}
