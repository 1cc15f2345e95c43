package schema

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Field is one parameter or result field of the table.
type Field struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// Method is one row of the table (the columns a check needs).
type Method struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	Direction string  `json:"direction"`
	Feature   string  `json:"feature"`
	HostCalls bool    `json:"host_calls"`
	Params    []Field `json:"params"`
	Result    []Field `json:"result"`
}

// Table is the method table and its named types.
type Table struct {
	Protocol string             `json:"protocol"`
	Types    map[string][]Field `json:"types"`
	Methods  []Method           `json:"methods"`
}

// Parse reads a published method table.
func Parse(data []byte) (*Table, error) {
	var t Table
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("method table: %w", err)
	}
	return &t, nil
}

// Method returns the row of method name.
func (t *Table) Method(name string) (Method, bool) {
	for _, m := range t.Methods {
		if m.Name == name {
			return m, true
		}
	}
	return Method{}, false
}

// Check checks the object obj (the params or result at path at) against
// fields: the required ones present and not null, each one present of its
// type; strict also refuses a field the table does not list, as a check of
// what the host sends does (a plugin ignores unknown fields).
func (t *Table) Check(fields []Field, obj map[string]json.RawMessage, at string, strict bool) error {
	known := map[string]bool{}
	for _, f := range fields {
		known[f.Name] = true
		v, ok := obj[f.Name]
		if !ok || string(v) == "null" {
			if f.Required {
				return fmt.Errorf("%s.%s is required", at, f.Name)
			}
			continue
		}
		if err := t.Value(f.Type, v, at+"."+f.Name, strict); err != nil {
			return err
		}
	}
	for name := range obj {
		if strict && !known[name] {
			return fmt.Errorf("%s.%s is not in the table", at, name)
		}
	}
	return nil
}

// Value checks v against a type of the table: string, integer, number,
// boolean, object, array<T>, a union A|B or a named type.
func (t *Table) Value(typ string, v json.RawMessage, at string, strict bool) error {
	if alts := strings.Split(typ, "|"); len(alts) > 1 {
		for _, a := range alts {
			if t.Value(a, v, at, strict) == nil {
				return nil
			}
		}
		return fmt.Errorf("%s is not %s", at, typ)
	}
	if elem, ok := strings.CutPrefix(typ, "array<"); ok {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return fmt.Errorf("%s is not an array", at)
		}
		for i, it := range items {
			if err := t.Value(strings.TrimSuffix(elem, ">"), it, fmt.Sprintf("%s[%d]", at, i), strict); err != nil {
				return err
			}
		}
		return nil
	}
	if fields, ok := t.Types[typ]; ok {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return fmt.Errorf("%s is not a %s", at, typ)
		}
		return t.Check(fields, obj, at, strict)
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil || !primitive(typ, x) {
		return fmt.Errorf("%s is not %s", at, typ)
	}
	return nil
}

// primitive reports whether the decoded JSON value x is of type typ.
func primitive(typ string, x any) bool {
	switch typ {
	case "string":
		_, ok := x.(string)
		return ok
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "number":
		_, ok := x.(float64)
		return ok
	case "integer":
		n, ok := x.(float64)
		return ok && n == float64(int64(n))
	case "object":
		_, ok := x.(map[string]any)
		return ok
	}
	return false
}
