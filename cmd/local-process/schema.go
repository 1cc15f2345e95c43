package main

import (
	_ "embed"
	"encoding/json"

	"github.com/xbot-runtime/xbot/services/engine/compute/epp/schema"
)

// The method table this plugin was written from: a copy of the host's
// published docs/epp-methods.json (a test keeps the two equal).
//
//go:embed epp-methods.json
var methodsJSON []byte

// table is the method table, read as data.
type table struct{ *schema.Table }

func loadTable() (*table, error) {
	t, err := schema.Parse(methodsJSON)
	if err != nil {
		return nil, err
	}
	return &table{t}, nil
}

// check refuses params that lack a required field of the method's row or
// hold one of the wrong type (invalid_params); unknown fields are ignored.
func (t *table) check(method string, raw json.RawMessage) error {
	m, ok := t.Method(method)
	if !ok {
		return &rpcError{Code: -32601, Message: "method not found: " + method}
	}
	var obj map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &obj); err != nil {
			return &rpcError{Code: -32602, Message: "params must be an object"}
		}
	}
	if err := t.Check(m.Params, obj, "params", false); err != nil {
		return &rpcError{Code: -32602, Message: err.Error()}
	}
	return nil
}
