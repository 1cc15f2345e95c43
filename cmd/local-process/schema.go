package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// The method table this plugin was written from: a copy of the host's
// published docs/epp-methods.json (a test keeps the two equal).
//
//go:embed epp-methods.json
var methodsJSON []byte

type field struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

type methodRow struct {
	Name    string  `json:"name"`
	Kind    string  `json:"kind"`
	Feature string  `json:"feature"`
	Params  []field `json:"params"`
}

type table struct {
	Protocol string             `json:"protocol"`
	Types    map[string][]field `json:"types"`
	Methods  []methodRow        `json:"methods"`
	byName   map[string]methodRow
}

func loadTable() (*table, error) {
	var t table
	if err := json.Unmarshal(methodsJSON, &t); err != nil {
		return nil, err
	}
	t.byName = map[string]methodRow{}
	for _, m := range t.Methods {
		t.byName[m.Name] = m
	}
	return &t, nil
}

// check refuses params that lack a required field of the method's row or
// hold one of the wrong type (invalid_params); unknown fields are ignored.
func (t *table) check(method string, raw json.RawMessage) error {
	m, ok := t.byName[method]
	if !ok {
		return &rpcError{Code: -32601, Message: "method not found: " + method}
	}
	var obj map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &obj); err != nil {
			return &rpcError{Code: -32602, Message: "params must be an object"}
		}
	}
	if err := t.fields(m.Params, obj, "params"); err != nil {
		return &rpcError{Code: -32602, Message: err.Error()}
	}
	return nil
}

func (t *table) fields(fs []field, obj map[string]json.RawMessage, at string) error {
	for _, f := range fs {
		v, ok := obj[f.Name]
		if !ok || string(v) == "null" {
			if f.Required {
				return fmt.Errorf("%s.%s is required", at, f.Name)
			}
			continue
		}
		if err := t.value(f.Type, v, at+"."+f.Name); err != nil {
			return err
		}
	}
	return nil
}

// value checks v against a type of the table: a primitive, object,
// array<T>, a union A|B or a named type.
func (t *table) value(typ string, v json.RawMessage, at string) error {
	if alts := strings.Split(typ, "|"); len(alts) > 1 {
		for _, a := range alts {
			if t.value(a, v, at) == nil {
				return nil
			}
		}
		return fmt.Errorf("%s is not %s", at, typ)
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	if elem, ok := strings.CutPrefix(typ, "array<"); ok {
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return fmt.Errorf("%s is not an array", at)
		}
		for i, it := range items {
			if err := t.value(strings.TrimSuffix(elem, ">"), it, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if fs, ok := t.Types[typ]; ok {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) != nil {
			return fmt.Errorf("%s is not an object", at)
		}
		return t.fields(fs, obj, at)
	}
	if !primitive(typ, x) {
		return fmt.Errorf("%s is not %s", at, typ)
	}
	return nil
}

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
