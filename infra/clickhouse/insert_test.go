package clickhouse_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/infra/clickhouse"
)

func TestInsertColumns(t *testing.T) {
	t.Parallel()
	conn := newConn(t)
	ctx := context.Background()
	err := conn.Exec(ctx, `CREATE TABLE t (id UInt64, name String, at DateTime, code Nullable(Int32))
		ENGINE = MergeTree ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	seven := int32(7)
	at := time.Unix(1_700_000_000, 0).UTC()
	err = conn.Insert(ctx, "t",
		clickhouse.Column{Name: "name", Values: []string{"a", "b;'c"}},
		clickhouse.Column{Name: "id", Values: []uint64{1, 2}},
		clickhouse.Column{Name: "at", Values: []time.Time{at, at.Add(time.Second)}},
		clickhouse.Column{Name: "code", Values: []*int32{nil, &seven}})
	if err != nil {
		t.Fatal(err)
	}
	got := column(t, conn, "SELECT concat(toString(id), ' ', name, ' ', toString(toUnixTimestamp(at)), ' ', ifNull(toString(code), 'NULL')) FROM t ORDER BY id")
	want := "1 a 1700000000 NULL|2 b;'c 1700000001 7"
	if strings.Join(got, "|") != want {
		t.Errorf("rows %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestInsertRejectsMismatch(t *testing.T) {
	t.Parallel()
	conn := newConn(t)
	cases := map[string][]clickhouse.Column{
		"lengths":   {{Name: "a", Values: []string{"x"}}, {Name: "b", Values: []string{}}},
		"not slice": {{Name: "a", Values: "x"}},
		"bad name":  {{Name: "a b", Values: []string{"x"}}},
		"none":      nil,
	}
	for name, cols := range cases {
		if err := conn.Insert(context.Background(), "t", cols...); err == nil {
			t.Errorf("%s: Insert succeeded", name)
		}
	}
	if err := conn.Insert(context.Background(), "bad table", clickhouse.Column{Name: "a", Values: []string{"x"}}); err == nil {
		t.Error("bad table name: Insert succeeded")
	}
}

func TestInsertNoRowsSendsNothing(t *testing.T) {
	t.Parallel()
	conn := newConn(t)
	// The table does not exist: an insert that reached the server would fail.
	if err := conn.Insert(context.Background(), "missing", clickhouse.Column{Name: "a", Values: []string{}}); err != nil {
		t.Fatal(err)
	}
}
