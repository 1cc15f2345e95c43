package profile

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// SkillRef names a skill an agent uses and the versions it accepts
// (agents.yaml skills). When a run starts, the newest version in the skill
// store that Version allows is frozen into its snapshot and mounted
// read-only at /skills/{skill_version_id}/ in its sandbox.
type SkillRef struct {
	// Name is the skill's name. Required.
	Name string `yaml:"name" json:"name"`
	// Version is a semantic version range: "1.2.3", "^1.2", "~1.2",
	// ">= 1.0, < 2", "1.x"; "" or "*" takes the newest version.
	Version string `yaml:"version" json:"version,omitempty"`
}

// SkillNamePattern is what a skill's name may look like: it is a path
// segment in the sandbox and in the skill store.
var SkillNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// MaxSkills bounds a profile's skills: each is a mount of every command.
const MaxSkills = 32

// Constraint parses the version range ("" is any version).
func (r SkillRef) Constraint() (*semver.Constraints, error) {
	v := strings.TrimSpace(r.Version)
	if v == "" {
		v = "*"
	}
	c, err := semver.NewConstraint(v)
	if err != nil {
		return nil, fmt.Errorf("skill %s: version range %q: %w", r.Name, r.Version, err)
	}
	return c, nil
}

// SkillVersion is one version of a skill as a run's snapshot freezes it.
type SkillVersion struct {
	// ID is the skill version id, name@version; the skill's files are at
	// /skills/{ID}/ in the sandbox.
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version string `json:"version"`
	// Description is what the model is told about the skill.
	Description string `json:"description"`
	// Digest is "sha256:" and the digest of the version's files (names,
	// modes and contents), checked when a run starts.
	Digest string `json:"digest"`
}

// SkillVersionID is the id of version of skill name.
func SkillVersionID(name, version string) string { return name + "@" + version }

// Path is the skill version's directory in the sandbox.
func (v SkillVersion) Path() string { return path.Join(compute.SkillsRoot, v.ID) }

// skillReaders are the tools with which a model can read a skill's files.
var skillReaders = []string{"read_file", "shell"}

// validateSkills reports every problem of the profile's skills.
func validateSkills(refs []SkillRef, tools []string) []error {
	var errs []error
	if len(refs) > MaxSkills {
		errs = append(errs, fmt.Errorf("skills: at most %d skills", MaxSkills))
	}
	seen := map[string]bool{}
	for i, r := range refs {
		if !SkillNamePattern.MatchString(r.Name) {
			errs = append(errs, fmt.Errorf("skills[%d]: name %q must match %s", i, r.Name, SkillNamePattern))
		}
		if seen[r.Name] {
			errs = append(errs, fmt.Errorf("skills[%d]: skill %q is listed twice", i, r.Name))
		}
		seen[r.Name] = true
		if _, err := r.Constraint(); err != nil {
			errs = append(errs, fmt.Errorf("skills[%d]: %w", i, err))
		}
	}
	if len(refs) > 0 && !slices.ContainsFunc(skillReaders, func(t string) bool { return slices.Contains(tools, t) }) {
		errs = append(errs, errors.New("skills: the model reads a skill's instructions with read_file or shell; list one of them in tools"))
	}
	return errs
}

// capabilityErrors are the problems of the profile's MCP servers, skills
// and read-only mounts.
func (p Profile) capabilityErrors() []error {
	var errs []error
	if err := p.Sandbox.validateMounts(); err != nil {
		errs = append(errs, fmt.Errorf("profile %q: sandbox mounts: %w", p.ID, err))
	}
	for _, err := range append(validateMCP(p.MCPServers), validateSkills(p.Skills, p.Tools)...) {
		errs = append(errs, fmt.Errorf("profile %q: %w", p.ID, err))
	}
	return errs
}
