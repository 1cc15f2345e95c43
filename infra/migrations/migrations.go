// Package migrations lists versioned SQL migration files (NNNN_description.sql)
// for the stores that apply them (infra/postgres, infra/clickhouse).
package migrations

import (
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"
)

// name matches NNNN_description.sql; the digits are the version.
var name = regexp.MustCompile(`^([0-9]+)_[^/]+\.sql$`)

// File is one migration to apply.
type File struct {
	Name    string
	Version string
}

// List returns the migration files at the root of files in lexical order,
// rejecting misnamed .sql files and duplicate versions.
func List(files fs.FS) ([]File, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, fmt.Errorf("list migration files: %w", err)
	}
	var list []File
	seen := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m := name.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s: name must be NNNN_description.sql", e.Name())
		}
		if prev, dup := seen[m[1]]; dup {
			return nil, fmt.Errorf("migration files %s and %s share version %s", prev, e.Name(), m[1])
		}
		seen[m[1]] = e.Name()
		list = append(list, File{Name: e.Name(), Version: m[1]})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list, nil
}
