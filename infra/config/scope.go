package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Scope declares a compute provider's own settings (the fields of its
// manifest), so that every layer knows them by their one name each:
// XBOT_<ID>_<FIELD> in the environment and the dotenv files, <field> of the
// table [providers.<id>] in config.toml. A provider's settings are resolved
// for it alone: the names of one provider are never read for another.
type Scope struct {
	// ID is the provider's id (lowercase letters, digits, hyphens).
	ID string
	// Fields are its settings.
	Fields []ScopedField
}

// ScopedField is one setting of a provider.
type ScopedField struct {
	Name    string
	Default string
	Secret  bool
	Usage   string
}

// scopePrefix starts the name of a provider's setting: providers.<id>.<field>.
const scopePrefix = "providers."

// ScopedEnv is the one environment variable of a provider's setting:
// XBOT_ + the id upper-cased with its hyphens as underscores + _ + the field
// upper-cased.
func ScopedEnv(id, field string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(id, "-", "_")) + "_" + strings.ToUpper(field)
}

// scopedName is the name Explain shows: providers.<id>.<field>.
func scopedName(id, field string) string { return scopePrefix + id + "." + field }

// scopes indexes the declared provider settings.
type scopes struct {
	byName map[string]Key // providers.<id>.<field>
	byEnv  map[string]Key
	ids    map[string]map[string]bool // id → fields
}

// indexScopes checks the scopes: a variable that is also a core key's or
// another provider setting's is an error, so no name ever means two things.
func indexScopes(list []Scope) (*scopes, error) {
	s := &scopes{byName: map[string]Key{}, byEnv: map[string]Key{}, ids: map[string]map[string]bool{}}
	var errs []error
	for _, sc := range list {
		s.ids[sc.ID] = map[string]bool{}
		for _, f := range sc.Fields {
			k := Key{Name: scopedName(sc.ID, f.Name), Default: f.Default, Secret: f.Secret, Usage: f.Usage,
				Variable: ScopedEnv(sc.ID, f.Name)}
			if core, ok := byEnv[k.Variable]; ok {
				errs = append(errs, fmt.Errorf("provider %s: setting %s would be %s, which is xbot's %s", sc.ID, f.Name, k.Variable, core.Name))
				continue
			}
			if other, ok := s.byEnv[k.Variable]; ok {
				errs = append(errs, fmt.Errorf("%s names both %s and %s", k.Variable, other.Name, k.Name))
				continue
			}
			s.byName[k.Name], s.byEnv[k.Variable] = k, k
			s.ids[sc.ID][f.Name] = true
		}
	}
	return s, errors.Join(errs...)
}

// CheckScopes reports what Load would refuse of these scopes: a variable
// that is a core key's or another provider's.
func CheckScopes(list []Scope) error {
	_, err := indexScopes(list)
	return err
}

// Scoped returns the settings of provider id, sorted by field (nil for a
// provider that declared none).
func (r *Resolved) Scoped(id string) []Value {
	var out []Value
	for name, v := range r.scoped {
		if strings.HasPrefix(name, scopePrefix+id+".") {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b Value) int { return strings.Compare(a.Key.Name, b.Key.Name) })
	return out
}

// Field is the setting's name within its provider (the last part of
// providers.<id>.<field>), or the key's name for a core key.
func (k Key) Field() string {
	if !strings.HasPrefix(k.Name, scopePrefix) {
		return k.Name
	}
	return k.Name[strings.LastIndexByte(k.Name, '.')+1:]
}

// scopedValues resolves every declared provider setting.
func (s *scopes) resolve(layers []layerValues) map[string]Value {
	out := make(map[string]Value, len(s.byName))
	for _, k := range s.byName {
		out[k.Name] = resolve(k, layers)
	}
	return out
}

// tomlProviders reads the [providers.<id>] tables of config.toml: each id
// and field must be declared.
func (s *scopes) tomlProviders(path, src string, raw any) (map[string]entry, error) {
	tables, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: providers must be a table of [providers.<id>] tables", path)
	}
	out := map[string]entry{}
	var errs []error
	for id, t := range tables {
		fields, ok := t.(map[string]any)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: providers.%s must be a table", path, id))
			continue
		case s.ids[id] == nil:
			errs = append(errs, fmt.Errorf("%s: [providers.%s] (line %d): no such provider is installed", path, id, keyLine(src, "providers."+id)))
			continue
		}
		for name, v := range fields {
			if !s.ids[id][name] {
				errs = append(errs, fmt.Errorf("%s: providers.%s.%s: provider %s has no setting %s", path, id, name, id, name))
				continue
			}
			str, err := stringify(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: providers.%s.%s: %w", path, id, name, err))
				continue
			}
			out[scopedName(id, name)] = entry{value: str, origin: fmt.Sprintf("%s:%d", path, keyLine(src, "providers."+id))}
		}
	}
	return out, errors.Join(errs...)
}

// mustScopes indexes scopes that are known to be consistent.
func mustScopes(list []Scope) *scopes {
	s, err := indexScopes(list)
	if err != nil {
		panic(err)
	}
	return s
}
