package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Column is one column of a batch insert: its name and its values as a slice
// of the Go type the driver maps to the column type ([]string for String,
// []uint64 for UInt64, []time.Time for DateTime, []*int32 for
// Nullable(Int32), …).
type Column struct {
	Name   string
	Values any
}

// Insert sends the columns to table as one batch (one INSERT, one block):
// column-wise, which spares the driver a per-row conversion. Every Values
// must be a slice of the same length; zero rows send nothing. Columns not
// named get their default. On error the batch is aborted; if the error is a
// timeout the rows may nevertheless have been written.
func (c *Conn) Insert(ctx context.Context, table string, cols ...Column) error {
	rows, err := checkColumns(table, cols)
	if err != nil || rows == 0 {
		return err
	}
	ctx, cancel := withDeadline(ctx, c.cfg.QueryTimeout)
	defer cancel()
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.Name
	}
	batch, err := c.PrepareBatch(ctx, "INSERT INTO "+table+" ("+strings.Join(names, ", ")+")")
	if err != nil {
		return fmt.Errorf("insert into %s: prepare: %w", table, err)
	}
	for i, col := range cols {
		if err := batch.Column(i).Append(col.Values); err != nil {
			_ = batch.Abort() // the append error is what matters
			return fmt.Errorf("insert into %s: column %s: %w", table, col.Name, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("insert %d rows into %s: %w", rows, table, err)
	}
	return nil
}

// checkColumns validates an insert and returns its row count.
func checkColumns(table string, cols []Column) (int, error) {
	if !validTable(table) {
		return 0, fmt.Errorf("insert: table name %q: use [database.]table with letters, digits and _", table)
	}
	if len(cols) == 0 {
		return 0, fmt.Errorf("insert into %s: no columns", table)
	}
	rows := -1
	var errs []error
	for _, col := range cols {
		if !validIdentifier(col.Name) {
			errs = append(errs, fmt.Errorf("column name %q is not a plain identifier", col.Name))
			continue
		}
		v := reflect.ValueOf(col.Values)
		if v.Kind() != reflect.Slice {
			errs = append(errs, fmt.Errorf("column %s: values are %T, not a slice", col.Name, col.Values))
			continue
		}
		if rows >= 0 && v.Len() != rows {
			errs = append(errs, fmt.Errorf("column %s has %d values, the first column %d", col.Name, v.Len(), rows))
		}
		if rows < 0 {
			rows = v.Len()
		}
	}
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("insert into %s: %w", table, err)
	}
	return rows, nil
}

// validTable accepts table or database.table of plain identifiers.
func validTable(name string) bool {
	db, table, qualified := strings.Cut(name, ".")
	if !qualified {
		return validIdentifier(name)
	}
	return validIdentifier(db) && validIdentifier(table)
}
