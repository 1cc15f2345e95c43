package plugin

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
)

// ManifestFile is the manifest's name at the plugin's root.
const ManifestFile = "xbot-provider.toml"

// maxManifestBytes bounds a manifest.
const maxManifestBytes = 256 << 10

// Manifest is xbot-provider.toml. Unknown tables and keys are ignored
// (forward compatibility).
type Manifest struct {
	ManifestVersion int          `toml:"manifest_version"`
	Provider        ProviderInfo `toml:"provider"`
	Compat          struct {
		Protocol      string `toml:"protocol"`
		ProtocolMinor int    `toml:"protocol_minor"`
	} `toml:"compat"`
	Runtime  Runtime `toml:"runtime"`
	Features struct {
		Supported []string `toml:"supported"`
	} `toml:"features"`
	Security Security `toml:"security"`
	Core     struct {
		Inherit []string `toml:"inherit"`
	} `toml:"core"`
	Auth struct {
		AnyOf [][]string `toml:"any_of"`
	} `toml:"auth"`
	Config struct {
		Fields map[string]Field `toml:"fields"`
	} `toml:"config"`
}

// ProviderInfo is the [provider] table.
type ProviderInfo struct {
	ID          string `toml:"id"`
	Name        string `toml:"name"`
	Version     string `toml:"version"`
	Description string `toml:"description"`
	License     string `toml:"license"`
	Homepage    string `toml:"homepage"`
}

// Runtime is the [runtime] table.
type Runtime struct {
	Kind             string   `toml:"kind"`
	Command          []string `toml:"command"`
	StartupTimeoutMS int      `toml:"startup_timeout_ms"`
	CallTimeoutMS    int      `toml:"call_timeout_ms"`
	Platforms        []string `toml:"platforms"`
}

// Security is the [security] table: what the plugin says it does. Shown at
// consent and recorded; env_passthrough is enforced, the rest advisory.
type Security struct {
	Network         []string `toml:"network" json:"network"`
	Filesystem      []string `toml:"filesystem" json:"filesystem"`
	EnvPassthrough  []string `toml:"env_passthrough" json:"env_passthrough"`
	SpawnsProcesses bool     `toml:"spawns_processes" json:"spawns_processes"`
}

// Field is one provider-scoped setting ([config.fields.<name>]).
type Field struct {
	Type        string   `toml:"type"`
	Required    bool     `toml:"required"`
	Secret      bool     `toml:"secret"`
	Credential  bool     `toml:"credential"`
	Default     any      `toml:"default"`
	Values      []string `toml:"values"`
	Description string   `toml:"description"`
}

// Inheritable are the core settings a plugin may ask for in [core] inherit:
// how xbot's own providers lay out and limit sandboxes. No secret, no LLM,
// API, Kafka or database key is among them, so none ever reaches a plugin.
var Inheritable = []string{"compute_dir", "sandbox_cgroup_parent", "sandbox_gid", "sandbox_limits", "sandbox_uid"}

var (
	idSyntax    = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	fieldSyntax = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	fieldTypes  = []string{"string", "int", "float", "bool", "enum", "path", "url", "csv"}
	fsScopes    = []string{"data_dir", "cwd", "home", "any"}
	// reserved are ids a plugin may not take: xbot's own providers and
	// the words of provider selection and configuration.
	reserved = []string{"auto", "bwrap", "local", "default", "all", "none", "builtin", "core", "transport",
		"providers", "shortcuts", "xbot", "epp"}
)

// ErrManifest is wrapped by every manifest problem.
var ErrManifest = errors.New("invalid provider manifest")

// CheckID refuses an id that is not 2-40 characters of ^[a-z][a-z0-9]*(-[a-z0-9]+)*$
// (no underscore: the id's variable names stay unambiguous) or is reserved.
func CheckID(id string) error {
	switch {
	case len(id) < 2 || len(id) > 40 || !idSyntax.MatchString(id):
		return fmt.Errorf("provider id %q: want 2-40 characters of lowercase letters, digits and single hyphens, starting with a letter", id)
	case slices.Contains(reserved, id) || strings.HasPrefix(id, "xbot-"):
		return fmt.Errorf("provider id %q is reserved", id)
	}
	return nil
}

// ParseManifest reads and validates a manifest.
func ParseManifest(data []byte) (*Manifest, error) {
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("%w: %s is over %d KiB", ErrManifest, ManifestFile, maxManifestBytes>>10)
	}
	var m Manifest
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrManifest, ManifestFile, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Validate reports every problem of m.
func (m *Manifest) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if m.ManifestVersion != 1 {
		add("manifest_version is %d, want 1", m.ManifestVersion)
	}
	if err := CheckID(m.Provider.ID); err != nil {
		errs = append(errs, err)
	}
	if m.Provider.Version == "" {
		add("provider.version is required")
	}
	if m.Compat.Protocol != epp.Protocol {
		add("compat.protocol is %q; this xbot speaks %s", m.Compat.Protocol, epp.Protocol)
	}
	errs = append(errs, m.Runtime.validate()...)
	errs = append(errs, m.validateFeatures()...)
	errs = append(errs, m.validateSecurity()...)
	errs = append(errs, m.validateConfig()...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrManifest, err)
	}
	return nil
}

func (r Runtime) validate() []error {
	var errs []error
	if r.Kind != "exec" {
		errs = append(errs, fmt.Errorf("runtime.kind is %q; this xbot runs exec plugins", r.Kind))
	}
	if err := epp.CheckCommand(r.Command); err != nil {
		errs = append(errs, fmt.Errorf("runtime.command: %w", err))
	} else if err := checkLauncher(r.Command[0]); err != nil {
		errs = append(errs, err)
	}
	if r.StartupTimeoutMS < 0 || r.CallTimeoutMS < 0 {
		errs = append(errs, errors.New("runtime timeouts must not be negative"))
	}
	if len(r.Platforms) > 0 && !slices.Contains(r.Platforms, runtime.GOOS) {
		errs = append(errs, fmt.Errorf("runtime.platforms %v does not include %s", r.Platforms, runtime.GOOS))
	}
	return errs
}

// checkLauncher refuses a launcher that needs a shell.
func checkLauncher(prog string) error {
	lower := strings.ToLower(prog)
	for _, ext := range []string{".bat", ".cmd", ".ps1"} {
		if strings.HasSuffix(lower, ext) {
			return fmt.Errorf("runtime.command %q needs a shell; give a program, or an interpreter and a script", prog)
		}
	}
	return nil
}

// Timeouts are the manifest's, zero when it names none (the host's defaults).
func (r Runtime) Timeouts() (startup, call time.Duration) {
	return time.Duration(r.StartupTimeoutMS) * time.Millisecond, time.Duration(r.CallTimeoutMS) * time.Millisecond
}

// defaultString is a field's default as the string every layer uses.
func (f Field) defaultString() string {
	switch v := f.Default.(type) {
	case nil:
		return ""
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(f.Default)
}

// DefaultValue is the field's default ("" for none).
func (f Field) DefaultValue() string { return f.defaultString() }
