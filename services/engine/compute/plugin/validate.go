package plugin

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
)

// features are the features a manifest may declare.
func features() []string {
	var out []string
	for _, f := range epp.Features {
		if f.Name != "core" {
			out = append(out, f.Name)
		}
	}
	return out
}

func (m *Manifest) validateFeatures() []error {
	var errs []error
	known := features()
	for _, f := range m.Features.Supported {
		if !slices.Contains(known, f) {
			errs = append(errs, fmt.Errorf("features.supported: unknown feature %q (known: %s)", f, strings.Join(known, ", ")))
		}
	}
	have := func(f string) bool { return slices.Contains(m.Features.Supported, f) }
	if !have("sandbox.lifecycle") || (!have("exec.run") && !have("exec.stream")) {
		errs = append(errs, errors.New("features.supported must include sandbox.lifecycle, and exec.run or exec.stream"))
	}
	return errs
}

func (m *Manifest) validateSecurity() []error {
	var errs []error
	for _, name := range m.Security.EnvPassthrough {
		if err := epp.CheckPassthrough(name); err != nil {
			errs = append(errs, fmt.Errorf("security.env_passthrough: %w", err))
		}
	}
	for _, fs := range m.Security.Filesystem {
		if !slices.Contains(fsScopes, fs) {
			errs = append(errs, fmt.Errorf("security.filesystem: %q is not one of %s", fs, strings.Join(fsScopes, ", ")))
		}
	}
	for _, k := range m.Core.Inherit {
		if !slices.Contains(Inheritable, k) {
			errs = append(errs, fmt.Errorf("core.inherit: %q may not be inherited (only %s)", k, strings.Join(Inheritable, ", ")))
		}
	}
	return errs
}

func (m *Manifest) validateConfig() []error {
	var errs []error
	for name, f := range m.Config.Fields {
		switch {
		case !fieldSyntax.MatchString(name) || len(name) > 64:
			errs = append(errs, fmt.Errorf("config field %q: want ^[a-z][a-z0-9_]*$, at most 64 characters", name))
		case strings.HasPrefix(name, "shortcuts") || slices.Contains(Inheritable, name):
			errs = append(errs, fmt.Errorf("config field %q: the name is reserved", name))
		}
		if !slices.Contains(fieldTypes, f.Type) {
			errs = append(errs, fmt.Errorf("config field %s: type %q is not one of %s", name, f.Type, strings.Join(fieldTypes, ", ")))
		}
		if f.Type == "enum" && len(f.Values) == 0 {
			errs = append(errs, fmt.Errorf("config field %s: an enum needs values", name))
		}
		if (f.Secret || f.Credential) && f.Default != nil {
			errs = append(errs, fmt.Errorf("config field %s: a secret has no default", name))
		}
	}
	for _, group := range m.Auth.AnyOf {
		for _, name := range group {
			if _, ok := m.Config.Fields[name]; !ok {
				errs = append(errs, fmt.Errorf("auth.any_of names %q, which is not a config field", name))
			}
		}
	}
	return errs
}

// Secret reports whether the named field's value is secret.
func (m *Manifest) Secret(name string) bool {
	f, ok := m.Config.Fields[name]
	return ok && (f.Secret || f.Credential)
}

// EnvName is the one environment variable of a provider's field:
// XBOT_<ID>_<KEY>, the id's hyphens as underscores, upper-cased.
func EnvName(id, field string) string {
	return "XBOT_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_")) + "_" + strings.ToUpper(field)
}
