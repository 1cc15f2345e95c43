// Package baseline measures the raw cost of the writes xbot makes, with the
// bare client libraries and no xbot code in the path: a franz-go
// transactional producer, pgx CopyFrom into a table without keys, and a
// clickhouse-go batch insert into a table without materialized views. `xbot
// bench` runs them on the same servers as the system it measures, so the
// system's figures can be read against a floor.
//
// Each baseline writes the given event envelopes once and reports events/s;
// it creates its own topic or table and drops the table when it is done.
// A baseline does not retry: any error ends it and is returned.
package baseline
