package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/config"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

// storeIn is the provider store of the user whose home is home
// (~/.xbot/providers, beside config.toml).
func storeIn(home string) *plugin.Store {
	return &plugin.Store{Dir: filepath.Join(home, ".xbot", "providers")}
}

// userHome is the directory holding .xbot ("" when there is none).
func userHome() string {
	home, _ := os.UserHomeDir() // none: no user layers, no installed providers
	return home
}

// scopeOf declares a manifest's settings to the configuration.
func scopeOf(m *plugin.Manifest) config.Scope {
	sc := config.Scope{ID: m.Provider.ID}
	for name, f := range m.Config.Fields {
		sc.Fields = append(sc.Fields, config.ScopedField{Name: name, Default: f.DefaultValue(), Secret: f.Secret || f.Credential,
			Usage: f.Description})
	}
	slices.SortFunc(sc.Fields, func(a, b config.ScopedField) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return sc
}

// storeScopes declares the settings of every installed provider and of
// those removed without --purge (their settings stay known). A provider
// that cannot be read is left out, with a warning.
func storeScopes(st *plugin.Store, warn func(error)) []config.Scope {
	var out []config.Scope
	installed, err := st.List()
	if err != nil {
		warn(err)
	}
	for _, in := range installed {
		out = append(out, scopeOf(in.Manifest))
	}
	kept, err := st.Kept()
	if err != nil {
		warn(err)
	}
	for _, m := range kept {
		if !slices.ContainsFunc(out, func(s config.Scope) bool { return s.ID == m.Provider.ID }) {
			out = append(out, scopeOf(m))
		}
	}
	return out
}

// builtinProviders are compute_provider's values that are not plugins.
var builtinProviders = []string{"", "auto", "bwrap", "local"}

// pluginConfig is the EPP configuration of the installed provider id with
// its settings: its own (required ones must be set) and the core settings
// it inherits with consent. Nothing else of the configuration reaches it,
// nor the variables of the agents' model keys (profiles).
func (s *settings) pluginConfig(id string) (*epp.Config, error) {
	in, err := s.store.Get(id)
	if errors.Is(err, plugin.ErrNotInstalled) {
		return nil, fmt.Errorf("compute_provider %q: want bwrap, local, auto or an installed provider (xbot provider list)", id)
	}
	if err != nil {
		return nil, err
	}
	settings := map[string]string{}
	var errs []error
	for _, v := range s.r.Scoped(id) {
		field := v.Key.Field()
		switch {
		case v.IsSet():
			settings[field] = v.Value
		case in.Manifest.Config.Fields[field].Required || in.Manifest.Config.Fields[field].Credential:
			errs = append(errs, fmt.Errorf("provider %s needs its setting %s: set %s or %s in [providers.%s] of ~/.xbot/config.toml",
				id, field, v.Key.Env(), field, id))
		}
	}
	for _, k := range in.Inherits() {
		if key, ok := config.Lookup(k); !ok || key.Secret || !slices.Contains(plugin.Inheritable, k) {
			return nil, fmt.Errorf("provider %s: %s may not be inherited", id, k) // the manifest's validation refuses it first
		}
		if v := s.r.Get(k); v != "" {
			settings[k] = v
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg := in.ProviderConfig(settings, plugin.Host{Name: "xbot", Version: version}, s.log.Named("provider").With(zap.String("provider", id)))
	cfg.Withhold = s.modelKeys.has
	return &cfg, nil
}
