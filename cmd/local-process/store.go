package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// record is a SandboxRecord as this plugin keeps it: one JSON file per
// sandbox in the records directory, written atomically, so that the plugin
// processes of several runs share them.
type record struct {
	SandboxID string            `json:"sandbox_id"`
	Template  string            `json:"template,omitempty"`
	Status    string            `json:"status"`
	CreatedAt string            `json:"created_at"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

type records struct{ dir string }

var errNoSandbox = &rpcError{Code: -32002, Message: "no such sandbox", Data: &errorRef{Kind: "sandbox_not_found"}}

func newID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "lp-" + hex.EncodeToString(b)
}

// validID refuses an id that could name a file outside the directory.
func validID(id string) bool {
	return strings.HasPrefix(id, "lp-") && len(id) == 19 && !strings.ContainsAny(id, `/\.`)
}

func (r records) path(id string) string { return filepath.Join(r.dir, id+".json") }

func (r records) create(template string, meta map[string]string) (record, error) {
	rec := record{SandboxID: newID(), Template: template, Status: "running",
		CreatedAt: time.Now().UTC().Format(time.RFC3339), Metadata: meta}
	data, err := json.Marshal(rec)
	if err != nil {
		return rec, err
	}
	tmp := r.path(rec.SandboxID) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return rec, err
	}
	return rec, os.Rename(tmp, r.path(rec.SandboxID))
}

func (r records) get(id string) (record, error) {
	var rec record
	if !validID(id) {
		return rec, errNoSandbox
	}
	data, err := os.ReadFile(r.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, errNoSandbox
	}
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(data, &rec)
}

// list returns the records whose metadata hold every pair of filter, by id.
func (r records) list(filter map[string]string) ([]record, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, err
	}
	var out []record
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		rec, err := r.get(id)
		if err != nil {
			continue // removed meanwhile
		}
		if matches(rec.Metadata, filter) {
			out = append(out, rec)
		}
	}
	slices.SortFunc(out, func(a, b record) int { return strings.Compare(a.SandboxID, b.SandboxID) })
	return out, nil
}

func matches(meta, filter map[string]string) bool {
	for k, v := range filter {
		if meta[k] != v {
			return false
		}
	}
	return true
}

func (r records) remove(id string) (bool, error) {
	if !validID(id) {
		return false, nil
	}
	err := os.Remove(r.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
