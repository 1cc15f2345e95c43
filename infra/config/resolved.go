package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Get returns the resolved value of the named key ("" when unset). It panics
// if name is not registered: that is a wiring bug.
func (r *Resolved) Get(name string) string { return r.Value(name).Value }

// Value returns the resolved value of the named key with its layer and
// origin. It panics if name is not registered.
func (r *Resolved) Value(name string) Value {
	mustLookup(name)
	return r.values[name]
}

// Values returns every resolved value, sorted by key name.
func (r *Resolved) Values() []Value {
	out := make([]Value, 0, len(r.values))
	for _, k := range Keys() {
		out = append(out, r.values[k.Name])
	}
	return out
}

// Int parses the named key as a decimal integer. The error names the key and
// where the value came from; it quotes the value only if the key is not
// secret. It panics if name is not registered.
func (r *Resolved) Int(name string) (int, error) {
	v := r.Value(name)
	n, err := strconv.Atoi(strings.TrimSpace(v.Value))
	if err != nil {
		return 0, v.parseError("an integer")
	}
	return n, nil
}

// Duration parses the named key as a Go duration such as "5s" or "1m30s".
// Errors are formed as for Int. It panics if name is not registered.
func (r *Resolved) Duration(name string) (time.Duration, error) {
	v := r.Value(name)
	d, err := time.ParseDuration(strings.TrimSpace(v.Value))
	if err != nil {
		return 0, v.parseError("a duration (e.g. 5s, 1m30s)")
	}
	return d, nil
}

// Bool parses the named key as a boolean (true/false, 1/0, …; see
// strconv.ParseBool); an unset key is false. Errors are formed as for Int.
func (r *Resolved) Bool(name string) (bool, error) {
	v := r.Value(name)
	s := strings.TrimSpace(v.Value)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, v.parseError("a boolean (true or false)")
	}
	return b, nil
}

// List splits the named key on commas, trims each element and drops empty
// ones; an unset key yields nil. It panics if name is not registered.
func (r *Resolved) List(name string) []string {
	var out []string
	for part := range strings.SplitSeq(r.Get(name), ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parseError describes a value that is not of the wanted kind.
func (v Value) parseError(want string) error {
	shown := strconv.Quote(v.Value)
	if v.Key.Secret {
		shown = "value"
	}
	return fmt.Errorf("%s: %s from %s (%s) is not %s", v.Key.Name, shown, v.Layer, v.Origin, want)
}

// UnknownEnv returns the XBOT_* variable names in env that name no registered
// key (nor, with scopes, a provider's setting), sorted; nil env means the
// process environment. Load ignores them (the
// environment is shared with other tools); callers may warn about them.
func UnknownEnv(env map[string]string, scopes ...Scope) []string {
	if env == nil {
		env = processEnv()
	}
	sc, _ := indexScopes(scopes) // a conflicting scope still names its variables
	var out []string
	for name := range env {
		_, scoped := sc.byEnv[name]
		if _, ok := byEnv[name]; !ok && !scoped && strings.HasPrefix(name, envPrefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
