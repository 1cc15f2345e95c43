package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// idPattern is what a rule id may look like: short, lowercase and free of
// spaces, because grants and audit logs carry it.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// serverPattern is an MCP server's name (profile.MCPServer.Name).
var serverPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// mcpSeparator joins an MCP server's name and its tool's in the name
// offered to the model.
const mcpSeparator = "__"

// defaultPrefix starts the id of every built-in rule. Profile rules may not
// use it while the built-in rules are in effect, so a grant naming a rule
// never means two rules, and later built-in rules cannot collide with a
// profile's.
const defaultPrefix = "default."

// Policy is a compiled Config. It is immutable and safe for concurrent use.
type Policy struct {
	rules []compiled // profile rules, then the built-in ones
	def   Action
	cfg   Config // what it was compiled from, Builtins resolved
}

// compiled is a rule with its regular expressions compiled; a nil pattern
// matches everything and a nil unless excludes nothing.
type compiled struct {
	Rule
	pattern *regexp.Regexp
	unless  *regexp.Regexp
}

// Compile validates c and compiles its patterns. It reports every problem at
// once, each naming the rule's index and id.
func Compile(c Config) (*Policy, error) {
	var errs []error
	seen := map[string]int{}
	rules := make([]compiled, 0, len(c.Rules)+len(defaultRules))
	for i, r := range c.Rules {
		cr, problems := compileRule(r)
		if first, dup := seen[r.ID]; dup && r.ID != "" {
			problems = append(problems, fmt.Errorf("duplicate id (also rules[%d])", first))
		} else {
			seen[r.ID] = i
		}
		if !c.NoDefaults && strings.HasPrefix(r.ID, defaultPrefix) {
			problems = append(problems, fmt.Errorf("id prefix %q is reserved for the built-in rules (set noDefaults to redefine them)", defaultPrefix))
		}
		for _, p := range problems {
			errs = append(errs, fmt.Errorf("rules[%d] (id %q): %w", i, r.ID, p))
		}
		rules = append(rules, cr)
	}
	if c.Default != "" && !c.Default.Valid() {
		errs = append(errs, fmt.Errorf("default: %w", badAction(c.Default)))
	}
	builtins, err := builtinSet(c)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	rules = append(rules, builtins...)
	def := c.Default
	if def == "" {
		def = Allow
	}
	c.Rules = slices.Clone(c.Rules)
	if !c.NoDefaults && c.Builtins == "" {
		c.Builtins = BuiltinsHash()
	}
	return &Policy{rules: rules, def: def, cfg: c}, nil
}

// BuiltinsHash names this build's built-in rule set: "sha256:" and the hex
// digest of DefaultRules as JSON.
var BuiltinsHash = sync.OnceValue(func() string { return hashRules(defaultRules) })

func hashRules(rules []Rule) string {
	raw, err := json.Marshal(rules)
	if err != nil {
		panic(fmt.Sprintf("policy: encode built-in rules: %v", err)) // plain strings: cannot happen
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// previousBuiltins holds earlier built-in rule sets by hash. When
// DefaultRules changes, add the set it replaces here, so a run whose
// capability snapshot froze the old set resumes with exactly it after an
// upgrade.
var previousBuiltins = map[string][]Rule{}

// builtinSet returns the compiled built-in rules c asks for: none with
// NoDefaults, this build's for an empty or current Builtins, else an
// earlier set this build still knows.
func builtinSet(c Config) ([]compiled, error) {
	switch {
	case c.NoDefaults:
		return nil, nil
	case c.Builtins == "" || c.Builtins == BuiltinsHash():
		return compiledDefaults(), nil
	}
	old, ok := previousBuiltins[c.Builtins]
	if !ok {
		return nil, fmt.Errorf("builtins: the built-in rule set %s is not known to this build (it has %s)", c.Builtins, BuiltinsHash())
	}
	out := make([]compiled, 0, len(old))
	for _, r := range old {
		cr, errs := compileRule(r)
		if len(errs) > 0 {
			return nil, fmt.Errorf("builtins %s: rule %q: %w", c.Builtins, r.ID, errors.Join(errs...))
		}
		out = append(out, cr)
	}
	return out, nil
}

// compileRule checks one rule and compiles its expressions, returning every
// problem it found.
func compileRule(r Rule) (compiled, []error) {
	var errs []error
	if r.ID == "" {
		errs = append(errs, errors.New("id is required"))
	} else if !idPattern.MatchString(r.ID) {
		errs = append(errs, fmt.Errorf("id must match %s", idPattern))
	}
	switch {
	case r.Tool == "" && r.Server == "":
		errs = append(errs, errors.New(`tool is required ("*" for every tool), or server for an MCP server's tools`))
	case r.Server != "" && !serverPattern.MatchString(r.Server):
		errs = append(errs, fmt.Errorf("server must match %s (an MCP server's name)", serverPattern))
	}
	if !r.Action.Valid() {
		errs = append(errs, fmt.Errorf("action: %w", badAction(r.Action)))
	}
	cr := compiled{Rule: r}
	var err error
	if cr.pattern, err = compileRE(r.Pattern); err != nil {
		errs = append(errs, fmt.Errorf("pattern: %w", err))
	}
	if cr.unless, err = compileRE(r.Unless); err != nil {
		errs = append(errs, fmt.Errorf("unless: %w", err))
	}
	return cr, errs
}

// compileRE compiles a non-empty RE2 expression; "" gives nil.
func compileRE(expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	return regexp.Compile(expr)
}

func badAction(a Action) error {
	return fmt.Errorf("%q is not one of %s, %s, %s", a, Allow, RequireApproval, Deny)
}

// compiledDefaults is DefaultRules compiled, once per process. The built-in
// rules are part of the program, so an error in them is a bug: it panics, and
// a test compiles them.
var compiledDefaults = sync.OnceValue(func() []compiled {
	defaults := DefaultRules()
	out := make([]compiled, len(defaults))
	for i, r := range defaults {
		cr, errs := compileRule(r)
		if len(errs) > 0 {
			panic(fmt.Sprintf("policy: built-in rule %q: %v", r.ID, errors.Join(errs...)))
		}
		out[i] = cr
	}
	return out
})

// Rules returns the rules p checks, in order: the profile's, then the
// built-in ones unless the Config dropped them.
func (p *Policy) Rules() []Rule {
	out := make([]Rule, len(p.rules))
	for i, r := range p.rules {
		out[i] = r.Rule
	}
	return out
}

// Snapshot returns a Config that compiles to a policy deciding exactly as p
// does: the profile's rules, and the built-in rule set named by its hash
// (Builtins), not copied (they are kilobytes of patterns in every run's
// snapshot). A later build that changes DefaultRules keeps the old set in
// previousBuiltins, so the Config keeps deciding the same way.
func (p *Policy) Snapshot() Config {
	c := p.cfg
	c.Rules = slices.Clone(c.Rules)
	return c
}
