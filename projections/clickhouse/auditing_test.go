package clickhouse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events/eventstest"
)

// auditingDoc is the page whose queries TestAuditingQueries runs.
const auditingDoc = "../../docs/auditing.md"

// docQuery is one ```sql block of the page, named by its first line.
type docQuery struct{ name, sql string }

var (
	sqlBlock  = regexp.MustCompile("(?s)```sql\n(.*?)```")
	queryName = regexp.MustCompile(`^-- name: ([a-z0-9_]+)\n`)
)

// docQueries parses the page: every sql block must start with "-- name: x".
func docQueries(t *testing.T) []docQuery {
	t.Helper()
	page, err := os.ReadFile(auditingDoc)
	if err != nil {
		t.Fatal(err)
	}
	var out []docQuery
	for _, m := range sqlBlock.FindAllStringSubmatch(string(page), -1) {
		name := queryName.FindStringSubmatch(m[1])
		if name == nil {
			t.Fatalf("a sql block of %s does not start with -- name: …:\n%s", auditingDoc, m[1])
		}
		out = append(out, docQuery{name: name[1], sql: m[1]})
	}
	if len(out) == 0 {
		t.Fatalf("no sql blocks in %s", auditingDoc)
	}
	return out
}

// TestAuditingQueries runs every query of docs/auditing.md against the
// workload and compares its result with testdata/auditing/<name>.tsv. A
// golden file without a query in the page fails too, so removing a query
// means removing its expectation.
func TestAuditingQueries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	recs := records(t, 3, workload(t)...)
	f.apply(t, recs, 4)
	f.apply(t, recs[10:30], 7) // re-delivered: the queries must not see duplicates
	queries := docQueries(t)
	var names []string
	for _, q := range queries {
		names = append(names, q.name)
		t.Run(q.name, func(t *testing.T) {
			got := f.tsv(t, q.sql)
			eventstest.Golden(t, filepath.Join("testdata", "auditing", q.name+".tsv"), []byte(got))
		})
	}
	goldens, _ := filepath.Glob(filepath.Join("testdata", "auditing", "*.tsv"))
	for _, g := range goldens {
		if name := strings.TrimSuffix(filepath.Base(g), ".tsv"); !slices.Contains(names, name) {
			t.Errorf("%s has no query named %s in %s", g, name, auditingDoc)
		}
	}
}

// tsv runs query and renders its result as tab-separated text with a header.
func (f *fixture) tsv(t *testing.T, query string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	rows, err := f.conn.Query(ctx, query)
	if err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	defer func() { _ = rows.Close() }()
	var b strings.Builder
	b.WriteString(strings.Join(rows.Columns(), "\t") + "\n")
	types := rows.ColumnTypes()
	for rows.Next() {
		dest := make([]any, len(types))
		for i, ct := range types {
			dest[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		cells := make([]string, len(dest))
		for i, d := range dest {
			cells[i] = render(reflect.ValueOf(d).Elem(), types[i].DatabaseTypeName())
		}
		b.WriteString(strings.Join(cells, "\t") + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// render formats a scanned value of a column of type dbType: NULL for a nil
// pointer, times and dates as ClickHouse prints them (UTC), slices as [a, b].
func render(v reflect.Value, dbType string) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "NULL"
		}
		v = v.Elem()
	}
	if t, ok := v.Interface().(time.Time); ok {
		if strings.TrimPrefix(dbType, "Nullable(") == "Date" {
			return t.UTC().Format("2006-01-02")
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	}
	if v.Kind() == reflect.Slice {
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = render(v.Index(i), "")
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}
