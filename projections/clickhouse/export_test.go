package clickhouse

import (
	"reflect"

	"github.com/xbot-runtime/xbot/projections/runner"
)

// ColumnNames returns the insert columns of each audit table, for the test
// that keeps them equal to the migrations.
func ColumnNames() map[string][]string {
	out := map[string][]string{}
	for _, s := range eventColumns {
		out["audit_events"] = append(out["audit_events"], s.name)
	}
	out["audit_commands"] = commandColumns
	return out
}

// EventRowValues returns the audit_events row of rec, in the column order of
// the table, for the raw insert baseline.
func EventRowValues(rec runner.Record) ([]any, error) {
	r, err := rowOf(rec.Event, rec.Partition, rec.Offset)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(eventColumns))
	for i, c := range eventColumns {
		out[i] = reflect.ValueOf(c.values([]eventRow{r})).Index(0).Interface()
	}
	return out, nil
}
