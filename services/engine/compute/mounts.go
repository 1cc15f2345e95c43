package compute

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// ReadOnlyMount is a host directory a sandbox sees, read-only, at Target:
// a skill version (at /skills/{skill_version_id}), or a directory an
// operator's agent profile names (where tools such as stdio MCP servers are
// installed outside the system directories).
type ReadOnlyMount struct {
	// Source is the host directory: absolute and clean. The sandbox user
	// must be able to reach and read it (its parents searchable by others
	// when the sandbox runs as a user of its own).
	Source string `yaml:"source" json:"source"`
	// Target is where the sandbox sees it: absolute and clean, outside the
	// system directories and the run's own ones.
	Target string `yaml:"target" json:"target"`
}

// reservedTargets are the sandbox paths a mount may not be at or below:
// the system (read-only already), the kernel's, and the run's own
// directories. /skills is only for skill versions (SkillsRoot).
var reservedTargets = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
	"/proc", "/dev", "/sys", "/tmp", "/run", "/workspace", "/sessions"}

// SkillsRoot is the sandbox directory below which skill versions are
// mounted, one directory each.
const SkillsRoot = "/skills"

// ErrBadMount is wrapped by every refused ReadOnlyMount.
var ErrBadMount = errors.New("read-only mount refused")

// Validate checks m's paths: absolute and clean, a Target that does not
// lie in (or above) a reserved directory, and one in SkillsRoot only as a
// directory right below it (a skill version's).
func (m ReadOnlyMount) Validate() error {
	if !filepath.IsAbs(m.Source) || filepath.Clean(m.Source) != m.Source || strings.ContainsRune(m.Source, 0) {
		return fmt.Errorf("%w: source %q must be an absolute, clean host path", ErrBadMount, m.Source)
	}
	if !path.IsAbs(m.Target) || path.Clean(m.Target) != m.Target || m.Target == "/" || strings.ContainsRune(m.Target, 0) {
		return fmt.Errorf("%w: target %q must be an absolute, clean sandbox path other than /", ErrBadMount, m.Target)
	}
	for _, r := range reservedTargets {
		if Under(m.Target, r) || Under(r, m.Target) {
			return fmt.Errorf("%w: target %q overlaps %s", ErrBadMount, m.Target, r)
		}
	}
	if Under(SkillsRoot, m.Target) || Under(m.Target, SkillsRoot) && path.Dir(m.Target) != SkillsRoot {
		return fmt.Errorf("%w: below %s only a skill version is mounted, at %s/<id>, not %q", ErrBadMount, SkillsRoot, SkillsRoot, m.Target)
	}
	return nil
}

// Under reports whether sandbox path p is dir or lies below it.
func Under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// CheckMounts validates every mount and refuses two whose targets overlap.
func CheckMounts(mounts []ReadOnlyMount) error {
	var errs []error
	for i, a := range mounts {
		errs = append(errs, a.Validate())
		for _, b := range mounts[i+1:] {
			if Under(a.Target, b.Target) || Under(b.Target, a.Target) {
				errs = append(errs, fmt.Errorf("%w: targets %q and %q overlap", ErrBadMount, a.Target, b.Target))
			}
		}
	}
	return errors.Join(errs...)
}
