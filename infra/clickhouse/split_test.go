package clickhouse_test

import (
	"reflect"
	"testing"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
)

func TestSplitStatements(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     []string
	}{
		{"one", "SELECT 1", []string{"SELECT 1"}},
		{"two with trailing", "SELECT 1;\nSELECT 2;\n", []string{"SELECT 1", "SELECT 2"}},
		{"quoted semicolons", `SELECT 'a;b', "c;d", ` + "`e;f`" + `; SELECT 'it''s;', 'x\';y'`,
			[]string{`SELECT 'a;b', "c;d", ` + "`e;f`", `SELECT 'it''s;', 'x\';y'`}},
		{"comments", "-- a; comment\nSELECT 1; /* b; */ SELECT 2 -- tail;\n-- only a comment;\n",
			[]string{"-- a; comment\nSELECT 1", "/* b; */ SELECT 2 -- tail;\n-- only a comment;"}},
		{"empty", " ;\n; -- nothing\n", nil},
	}
	for _, c := range cases {
		got, err := clickhouse.SplitStatements(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSplitStatementsUnterminated(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"SELECT 'a", "SELECT 1 /* open", "SELECT `x"} {
		if _, err := clickhouse.SplitStatements(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
