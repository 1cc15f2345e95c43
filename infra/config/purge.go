package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PurgeScope removes a provider's saved settings from the user's files in
// home/.xbot: its [providers.<id>] table and any other key below
// providers.<id> from config.toml, and the assignments of its variables
// from .env. Every other line stays as it
// was; a project's ./.env is not touched. It returns where it removed
// something (file:line).
func PurgeScope(home string, sc Scope) ([]string, error) {
	dir := filepath.Join(home, ".xbot")
	vars := map[string]bool{}
	for _, f := range sc.Fields {
		vars[ScopedEnv(sc.ID, f.Name)] = true
	}
	var removed []string
	tomlPath := filepath.Join(dir, "config.toml")
	got, err := editLines(tomlPath, tableDropper(sc.ID))
	removed = append(removed, got...)
	if err != nil {
		return removed, err
	}
	envPath := filepath.Join(dir, ".env")
	got, err = editLines(envPath, func(line string) bool {
		name, _, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "export "), "=")
		return ok && vars[strings.TrimSpace(name)]
	})
	return append(removed, got...), err
}

// tableDropper drops the lines of [providers.<id>] (and its subtables) up
// to the next table header, and every key line elsewhere whose dotted path
// lies below providers.<id> — providers.<id>.<field> = … at the top,
// <id> = { … } or <id>.<field> = … in [providers] — quoted or not.
func tableDropper(id string) func(string) bool {
	mine := func(path string) bool { return path == scopePrefix+id || strings.HasPrefix(path, scopePrefix+id+".") }
	table := ""
	return func(line string) bool {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			header, _, _ := strings.Cut(t, "]") // [a.b], [[a.b]], [a.b] # comment
			table = keyPath(strings.TrimLeft(header, "["))
			return mine(table)
		}
		key, _, ok := strings.Cut(t, "=")
		switch {
		case mine(table):
			return true
		case !ok || strings.HasPrefix(t, "#"):
			return false
		case table == "":
			return mine(keyPath(key))
		}
		return mine(table + "." + keyPath(key))
	}
}

// keyPath is a TOML key (bare, quoted or dotted) as one dotted path.
func keyPath(key string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\'' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, key)
}

// editLines rewrites path without the lines drop reports, keeping its mode;
// a missing file is nothing to do.
func editLines(path string, drop func(string) bool) ([]string, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- the user's own configuration file
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var kept []string
	var removed []string
	for i, line := range strings.Split(string(data), "\n") {
		if drop(line) {
			removed = append(removed, fmt.Sprintf("%s:%d", path, i+1))
			continue
		}
		kept = append(kept, line)
	}
	if len(removed) == 0 {
		return nil, nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(kept, "\n")), fi.Mode().Perm()); err != nil { // #nosec G703 -- beside the user's own configuration file
		return nil, err
	}
	return removed, os.Rename(tmp, path)
}
