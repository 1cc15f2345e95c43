package tools

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// Registry is an immutable set of tools with compiled parameter schemas. It is
// safe for concurrent use.
type Registry struct {
	entries map[string]entry
	names   []string // sorted
}

type entry struct {
	tool   Tool
	spec   model.ToolSpec
	schema *jsonschema.Schema
}

// toolName is what model providers accept as a function name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NewRegistry builds a registry of tools. It reports every problem at once: a
// nil tool, a name providers would reject, a name given twice, and parameters
// that are not a JSON Schema of an object.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{entries: make(map[string]entry, len(tools))}
	var errs []error
	for i, t := range tools {
		if t == nil {
			errs = append(errs, fmt.Errorf("tools: tool %d is nil", i))
			continue
		}
		spec := t.Spec()
		if !toolName.MatchString(spec.Name) {
			errs = append(errs, fmt.Errorf("tools: tool %d: name %q must match %s", i, spec.Name, toolName))
			continue
		}
		if _, dup := r.entries[spec.Name]; dup {
			errs = append(errs, fmt.Errorf("tools: tool %q is registered twice", spec.Name))
			continue
		}
		schema, err := compileSchema(spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("tools: tool %q: %w", spec.Name, err))
			continue
		}
		spec.Parameters = bytes.Clone(spec.Parameters)
		r.entries[spec.Name] = entry{tool: t, spec: spec, schema: schema}
		r.names = append(r.names, spec.Name)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.Sort(r.names)
	return r, nil
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	e, ok := r.entries[name]
	return e.tool, ok
}

// Names returns the registered tool names, sorted.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Specs returns the specs of the named tools in the order given, for a model
// request. A name that is not registered, or given twice, is an error naming
// every such name; no specs are returned then.
func (r *Registry) Specs(names []string) ([]model.ToolSpec, error) {
	specs := make([]model.ToolSpec, 0, len(names))
	var unknown, twice []string
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		e, ok := r.entries[n]
		switch {
		case !ok:
			unknown = append(unknown, n)
		case seen[n]:
			twice = append(twice, n)
		default:
			seen[n] = true
			spec := e.spec
			spec.Parameters = bytes.Clone(spec.Parameters)
			specs = append(specs, spec)
		}
	}
	var errs []error
	if len(unknown) > 0 {
		errs = append(errs, fmt.Errorf("tools: unknown tools %s (registered: %s)", quoteAll(unknown), strings.Join(r.names, ", ")))
	}
	if len(twice) > 0 {
		errs = append(errs, fmt.Errorf("tools: tools listed more than once: %s", quoteAll(twice)))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return specs, nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
