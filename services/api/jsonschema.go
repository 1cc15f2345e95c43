package api

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// convert turns a JSON Schema of schemas/v1 into an OpenAPI schema, with
// every reference into defs.json inlined. It fails on a keyword it does not
// know, so a construct added to the files is noticed by this package's
// tests rather than dropped from the document.
func (c *jsonSchemas) convert(m map[string]any) (*huma.Schema, error) {
	if ref, ok := m["$ref"].(string); ok {
		return c.inline(ref, m)
	}
	s := &huma.Schema{}
	for _, k := range sortedNames(m) {
		if err := c.keyword(s, k, m[k]); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		// OpenAPI 3.0 has no patternProperties: the values' schema is kept,
		// the keys' pattern is said in the description.
		for pattern, v := range pp {
			vm, _ := v.(map[string]any)
			vs, err := c.convert(vm)
			if err != nil {
				return nil, fmt.Errorf("patternProperties: %w", err)
			}
			s.AdditionalProperties = vs
			s.Description = strings.TrimSpace(s.Description + " Keys match " + pattern + ".")
		}
	}
	if s.Type == "" && len(s.Enum) > 0 && allStrings(s.Enum) {
		s.Type = huma.TypeString
	}
	if s.Type == huma.TypeInteger {
		s.Format = "int64" // times in milliseconds and seqs pass 32 bits
	}
	return s, nil
}

// keyword sets what keyword k with value v says on s.
func (c *jsonSchemas) keyword(s *huma.Schema, k string, v any) error {
	var err error
	switch k {
	case "$schema", "$id", "title", "patternProperties":
	case "description":
		s.Description, _ = v.(string)
	case "type":
		err = setType(s, v)
	case "properties":
		s.Properties = map[string]*huma.Schema{}
		props, _ := v.(map[string]any)
		for name, p := range props {
			pm, _ := p.(map[string]any)
			if s.Properties[name], err = c.convert(pm); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	case "items":
		vm, _ := v.(map[string]any)
		s.Items, err = c.convert(vm)
	case "additionalProperties":
		if b, ok := v.(bool); ok {
			s.AdditionalProperties = b
			break
		}
		vm, _ := v.(map[string]any)
		s.AdditionalProperties, err = c.convert(vm)
	case "required":
		s.Required = stringList(v)
	case "enum":
		s.Enum, _ = v.([]any)
	case "const":
		s.Enum = []any{v}
	case "pattern":
		s.Pattern, _ = v.(string)
	default:
		bound, ok := bounds[k]
		if !ok {
			return fmt.Errorf("keyword %q is not converted into OpenAPI", k)
		}
		bound(s, v)
	}
	return err
}

// bounds set the numeric keywords.
var bounds = map[string]func(*huma.Schema, any){
	"minimum":       func(s *huma.Schema, v any) { s.Minimum = number(v) },
	"maximum":       func(s *huma.Schema, v any) { s.Maximum = number(v) },
	"minLength":     func(s *huma.Schema, v any) { s.MinLength = count(v) },
	"maxLength":     func(s *huma.Schema, v any) { s.MaxLength = count(v) },
	"minItems":      func(s *huma.Schema, v any) { s.MinItems = count(v) },
	"maxItems":      func(s *huma.Schema, v any) { s.MaxItems = count(v) },
	"maxProperties": func(s *huma.Schema, v any) { s.MaxProperties = count(v) },
}

// inline converts the definition ref names, with the referring schema's
// own description, if any, in place of the definition's.
func (c *jsonSchemas) inline(ref string, m map[string]any) (*huma.Schema, error) {
	name, ok := strings.CutPrefix(ref, "defs.json#/$defs/")
	if !ok {
		name, ok = strings.CutPrefix(ref, "#/$defs/")
	}
	def, found := c.defs[name].(map[string]any)
	if !ok || !found {
		return nil, fmt.Errorf("$ref %q is not a definition of defs.json", ref)
	}
	s, err := c.convert(def)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	for k, v := range m {
		switch k {
		case "$ref", "$schema", "$id", "title":
		case "description":
			s.Description, _ = v.(string)
		default:
			return nil, fmt.Errorf("%s beside $ref %q is not converted", k, ref)
		}
	}
	return s, nil
}

// setType sets s's type: a name, or a name and "null".
func setType(s *huma.Schema, v any) error {
	switch t := v.(type) {
	case string:
		s.Type = t
		return nil
	case []any:
		for _, name := range stringList(t) {
			if name == "null" {
				s.Nullable = true
			} else if s.Type == "" {
				s.Type = name
			} else {
				return fmt.Errorf("types %v: only one besides null is converted", t)
			}
		}
		return nil
	}
	return fmt.Errorf("type %v", v)
}

func stringList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func allStrings(vs []any) bool {
	return !slices.ContainsFunc(vs, func(v any) bool { _, ok := v.(string); return !ok })
}

func number(v any) *float64 {
	f, ok := v.(float64)
	if !ok {
		return nil
	}
	return &f
}

func count(v any) *int {
	f, ok := v.(float64)
	if !ok {
		return nil
	}
	n := int(f)
	return &n
}

func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
