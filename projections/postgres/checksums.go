package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// checkpointsTable is the Checksums key of ProjectorName's checkpoints.
const checkpointsTable = "projector_checkpoints"

// Checksums returns a digest per read-model table — "<rows>:<md5>" of every
// row's text in key order — plus one of ProjectorName's checkpoints
// (projector_checkpoints), so that two views can be compared whole: a view
// rebuilt from offset zero must equal the live one.
//
// Every read-model column is derived from events, so every column counts.
// Left out are only the values that come from the clock of the projection,
// not from the log: the checkpoints' updated_at and the heartbeats (which
// are no read model). The digests are taken from one snapshot, with
// timestamps rendered in UTC and text keys sorted byte-wise, so they do not
// depend on the session's time zone or the database's locale. Checksums
// reads every row: it is meant for tests and operators, not hot paths.
func (s *Projector) Checksums(ctx context.Context) (map[string]string, error) {
	out := make(map[string]string, len(readModelTables)+1)
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			for _, set := range []string{"SET LOCAL TimeZone = 'UTC'", "SET LOCAL DateStyle = 'ISO, YMD'"} {
				if _, err := tx.Exec(ctx, set); err != nil {
					return err
				}
			}
			for _, t := range readModelTables {
				sum, err := digest(ctx, tx, "t::text", t.name+" AS t", t.orderBy)
				if err != nil {
					return fmt.Errorf("table %s: %w", t.name, err)
				}
				out[t.name] = sum
			}
			sum, err := digest(ctx, tx, "(topic, partition, next_offset)::text",
				"projector_checkpoints WHERE projector = $1", `topic COLLATE "C", partition`, ProjectorName)
			out[checkpointsTable] = sum
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("checksum read models: %w", err)
	}
	return out, nil
}

// digest returns "<rows>:<md5 of the rows' text joined by newlines>" of
// SELECT row FROM from ORDER BY orderBy.
func digest(ctx context.Context, tx pgx.Tx, row, from, orderBy string, args ...any) (string, error) {
	var sum string
	err := tx.QueryRow(ctx, "SELECT count(*) || ':' || coalesce(md5(string_agg("+row+", E'\\n' ORDER BY "+orderBy+
		")), '') FROM "+from, args...).Scan(&sum)
	return sum, err
}
