package migrations_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/xbot-runtime/xbot/infra/migrations"
)

func TestListOrdersAndRefuses(t *testing.T) {
	t.Parallel()
	ok := fstest.MapFS{
		"0002_items.sql": {Data: []byte("x")}, "0001_init.sql": {Data: []byte("x")},
		"README.md": {Data: []byte("x")}, "old/0003_x.sql": {Data: []byte("x")},
	}
	got, err := migrations.List(ok)
	if err != nil || len(got) != 2 || got[0] != (migrations.File{Name: "0001_init.sql", Version: "0001"}) || got[1].Version != "0002" {
		t.Fatalf("List = %+v, %v", got, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"NNNN_description.sql": {"init.sql": {Data: []byte("x")}},
		"share version 0001":   {"0001_a.sql": {Data: []byte("x")}, "0001_b.sql": {Data: []byte("x")}},
	} {
		if _, err := migrations.List(fsys); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want an error naming %q, got %v", name, err)
		}
	}
}
