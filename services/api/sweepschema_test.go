package api_test

import (
	"encoding/json"
	"strings"
)

// resolve follows a schema's $ref within doc.
func resolve(doc, s map[string]any) map[string]any {
	ref, _ := s["$ref"].(string)
	if ref == "" {
		return s
	}
	cur := any(doc)
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[part]
	}
	out, _ := cur.(map[string]any)
	return out
}

// requestSchema is the JSON body schema of op, or nil.
func requestSchema(doc, op map[string]any) map[string]any {
	rb, _ := op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	mt, _ := content["application/json"].(map[string]any)
	s, _ := mt["schema"].(map[string]any)
	if s == nil {
		return nil
	}
	return resolve(doc, s)
}

// fieldPaths lists the dotted paths of every property of s, nested objects
// included.
func fieldPaths(doc, s map[string]any, prefix string) []string {
	props, _ := s["properties"].(map[string]any)
	var out []string
	for _, name := range sortedKeys(props) {
		if name == "$schema" {
			continue
		}
		p := prefix + name
		out = append(out, p)
		if sub, _ := props[name].(map[string]any); sub != nil {
			out = append(out, fieldPaths(doc, resolve(doc, sub), p+".")...)
		}
	}
	return out
}

// sampleValue is a schema-valid value of s for its required properties,
// so that a mutation of one field is checked past the others.
func sampleValue(doc, s map[string]any) any {
	s = resolve(doc, s)
	if enum, _ := s["enum"].([]any); len(enum) > 0 {
		return enum[0]
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			if sub, _ := props[name].(map[string]any); sub != nil {
				out[name] = sampleValue(doc, sub)
			}
		}
		return out
	case "integer", "number":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	}
	return "x"
}

// setField returns a sample body of s whose field (a dotted path) is the
// raw JSON value.
func setField(doc, s map[string]any, field, raw string) string {
	body, _ := sampleValue(doc, s).(map[string]any)
	cur, schema := body, s
	parts := strings.Split(field, ".")
	for _, p := range parts[:len(parts)-1] {
		props, _ := schema["properties"].(map[string]any)
		sub, _ := props[p].(map[string]any)
		schema = resolve(doc, sub)
		next, _ := cur[p].(map[string]any)
		if next == nil {
			next, _ = sampleValue(doc, schema).(map[string]any)
			if next == nil {
				next = map[string]any{}
			}
			cur[p] = next
		}
		cur = next
	}
	cur[parts[len(parts)-1]] = json.RawMessage(raw)
	b, err := json.Marshal(body)
	if err != nil {
		return raw
	}
	return string(b)
}
