package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sources names every input of Load, so tests can inject each layer without
// touching the real environment or home directory.
type Sources struct {
	// Flags holds the flags the user actually set, by key name (see
	// BindFlags). Optional.
	Flags map[string]string
	// Env is the process environment by variable name. Nil means os.Environ();
	// a non-nil empty map means no environment.
	Env map[string]string
	// WorkDir is where ./.env is looked up. Empty means os.Getwd().
	WorkDir string
	// HomeDir is the directory holding .xbot/. Empty means os.UserHomeDir();
	// if that fails the two home layers are skipped.
	HomeDir string
	// Scopes declare the settings of the installed compute providers (see
	// Scope). Optional.
	Scopes []Scope
}

// Value is one resolved setting and where it came from.
type Value struct {
	// Key is the registered key.
	Key Key
	// Value is the resolved value; "" means unset.
	Value string
	// Layer is the layer that supplied Value.
	Layer Layer
	// Origin says where in that layer: "--kafka-brokers", "XBOT_KAFKA_BROKERS",
	// "/path/.env:3", "/home/u/.xbot/config.toml:2" or "default".
	Origin string
}

// IsSet reports whether the value is non-blank.
func (v Value) IsSet() bool { return strings.TrimSpace(v.Value) != "" }

// Resolved holds the value of every registered key and of every declared
// provider setting. It is immutable and safe for concurrent use.
type Resolved struct {
	values map[string]Value
	scoped map[string]Value // providers.<id>.<field>
}

// Load resolves every registered key from src's layers (see the package
// documentation for their order). Errors name the offending file and line: a
// malformed or unknown XBOT_* line in a dotenv file, a TOML syntax error or an
// unknown key in config.toml. A missing file is not an error.
func Load(src Sources) (*Resolved, error) {
	sc, err := indexScopes(src.Scopes)
	if err != nil {
		return nil, err
	}
	layers, err := readLayers(src, sc)
	if err != nil {
		return nil, err
	}
	r := &Resolved{values: make(map[string]Value, len(registry)), scoped: sc.resolve(layers)}
	for _, k := range registry {
		r.values[k.Name] = resolve(k, layers)
	}
	return r, nil
}

// resolve picks the first layer holding a non-blank value for k.
func resolve(k Key, layers []layerValues) Value {
	for _, l := range layers {
		if e, ok := l.values[k.Name]; ok && strings.TrimSpace(e.value) != "" {
			return Value{Key: k, Value: e.value, Layer: l.layer, Origin: e.origin}
		}
	}
	return Value{Key: k, Value: k.Default, Layer: LayerDefault, Origin: "default"}
}

// readLayers reads every layer above the default, highest first.
func readLayers(src Sources, sc *scopes) ([]layerValues, error) {
	flags, err := flagLayer(src.Flags)
	if err != nil {
		return nil, err
	}
	layers := []layerValues{
		{layer: LayerFlag, values: flags},
		{layer: LayerEnv, values: envLayer(src.Env, sc)},
	}
	workDir := src.WorkDir
	if workDir == "" {
		if workDir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("find working directory for ./.env: %w", err)
		}
	}
	dotenv, err := readDotenv(filepath.Join(workDir, ".env"), sc)
	if err != nil {
		return nil, err
	}
	layers = append(layers, layerValues{layer: LayerDotenv, values: dotenv})
	home := src.HomeDir
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return layers, nil // no home directory: no user layers
		}
	}
	return appendHomeLayers(layers, filepath.Join(home, ".xbot"), sc)
}

func appendHomeLayers(layers []layerValues, dir string, sc *scopes) ([]layerValues, error) {
	homeEnv, err := readDotenv(filepath.Join(dir, ".env"), sc)
	if err != nil {
		return nil, err
	}
	toml, err := readTOML(filepath.Join(dir, "config.toml"), sc)
	if err != nil {
		return nil, err
	}
	return append(layers,
		layerValues{layer: LayerHomeDotenv, values: homeEnv},
		layerValues{layer: LayerConfigTOML, values: toml},
	), nil
}

// flagLayer checks that every flag names a registered key.
func flagLayer(flags map[string]string) (map[string]entry, error) {
	out := make(map[string]entry, len(flags))
	for name, v := range flags {
		k, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("flag for unknown key %q", name)
		}
		out[name] = entry{value: v, origin: "--" + k.Flag()}
	}
	return out, nil
}

// envLayer picks the registered XBOT_* variables and the declared provider
// settings out of env (nil: the real process environment). Unknown XBOT_*
// variables are ignored here; see UnknownEnv.
func envLayer(env map[string]string, sc *scopes) map[string]entry {
	if env == nil {
		env = processEnv()
	}
	out := make(map[string]entry)
	for name, v := range env {
		if k, ok := byEnv[name]; ok {
			out[k.Name] = entry{value: v, origin: name}
		} else if k, ok := sc.byEnv[name]; ok {
			out[k.Name] = entry{value: v, origin: name}
		}
	}
	return out
}

func processEnv() map[string]string {
	env := make(map[string]string)
	for _, kv := range os.Environ() {
		if name, v, ok := strings.Cut(kv, "="); ok {
			env[name] = v
		}
	}
	return env
}
