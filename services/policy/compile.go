package policy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// idPattern is what a rule id may look like: short, lowercase and free of
// spaces, because grants and audit logs carry it.
var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// defaultPrefix starts the id of every built-in rule. Profile rules may not
// use it while the built-in rules are in effect, so a grant naming a rule
// never means two rules, and later built-in rules cannot collide with a
// profile's.
const defaultPrefix = "default."

// Policy is a compiled Config. It is immutable and safe for concurrent use.
type Policy struct {
	rules []compiled // profile rules, then the built-in ones
	def   Action
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
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if !c.NoDefaults {
		rules = append(rules, compiledDefaults()...)
	}
	def := c.Default
	if def == "" {
		def = Allow
	}
	return &Policy{rules: rules, def: def}, nil
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
	if r.Tool == "" {
		errs = append(errs, errors.New(`tool is required ("*" for every tool)`))
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
// does, with the built-in rules copied in: a capability snapshot that stores
// it keeps deciding the same way after a later version changes DefaultRules.
func (p *Policy) Snapshot() Config {
	return Config{Rules: p.Rules(), NoDefaults: true, Default: p.def}
}
