package clickhouse

import (
	"context"
	"fmt"
	"strings"
)

// Checksum digests the deduplicated rows of a table: their number and the
// sum (mod 2^64) of a 64-bit hash of each row's view columns. It does not
// depend on insertion order, duplicates or merges, so a view rebuilt from
// the log has the same Checksum as the live one.
type Checksum struct {
	Rows uint64
	Sum  uint64
}

// String formats c for test failures and logs.
func (c Checksum) String() string { return fmt.Sprintf("%d rows, sum %016x", c.Rows, c.Sum) }

// Checksums returns the Checksum of audit_events and audit_commands, keyed by
// table name. Kafka positions (kafka_partition, kafka_offset) are left out:
// they belong to one copy of the topic, not to the view. It reads each table
// with FINAL, so its cost grows with the table: it is meant for rebuild
// checks, not for a hot path.
func (p *Projector) Checksums(ctx context.Context) (map[string]Checksum, error) {
	out := map[string]Checksum{}
	for table, terms := range map[string][]string{
		"audit_events":   hashTerms(eventColumns),
		"audit_commands": commandColumns,
	} {
		c, err := p.checksum(ctx, table, terms)
		if err != nil {
			return nil, err
		}
		out[table] = c
	}
	return out, nil
}

func (p *Projector) checksum(ctx context.Context, table string, terms []string) (Checksum, error) {
	ctx, cancel := p.conn.WithTimeout(ctx)
	defer cancel()
	var c Checksum
	q := "SELECT count(), sum(cityHash64(" + strings.Join(terms, ", ") + ")) FROM " + table + " FINAL"
	if err := p.conn.QueryRow(ctx, q).Scan(&c.Rows, &c.Sum); err != nil {
		return Checksum{}, fmt.Errorf("checksum of %s: %w", table, err)
	}
	return c, nil
}

// hashTerms are the expressions hashed per row: the view's columns, with
// Nullable ones made non-null (cityHash64 of a NULL is NULL, which sum skips).
func hashTerms[R any](specs []colSpec[R]) []string {
	var out []string
	for _, s := range specs {
		switch {
		case !s.view:
		case s.hash != "":
			out = append(out, s.hash)
		default:
			out = append(out, s.name)
		}
	}
	return out
}
