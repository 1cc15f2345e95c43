package clickhouse

import (
	"time"

	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
)

// colSpec is one column of a table: its name, how to collect its values
// from rows, and its term in a row hash (Checksums).
type colSpec[R any] struct {
	name   string
	values func(rows []R) any
	// hash is the column's expression in Checksums; "" means the name.
	hash string
	// view says the column is part of the view (rebuilt == live). Kafka
	// positions are not: they differ between two copies of a topic.
	view bool
}

func collect[R, V any](rows []R, f func(*R) V) []V {
	out := make([]V, len(rows))
	for i := range rows {
		out[i] = f(&rows[i])
	}
	return out
}

func col[R, V any](name string, f func(*R) V) colSpec[R] {
	return colSpec[R]{name: name, view: true, values: func(rows []R) any { return collect(rows, f) }}
}

// timeCol is a DateTime column filled from Unix milliseconds.
func timeCol[R any](name string, f func(*R) uint64) colSpec[R] {
	return col(name, func(r *R) time.Time { return msTime(f(r)) })
}

// columns returns the insert columns of rows.
func columns[R any](specs []colSpec[R], rows []R) []chinfra.Column {
	out := make([]chinfra.Column, len(specs))
	for i, s := range specs {
		out[i] = chinfra.Column{Name: s.name, Values: s.values(rows)}
	}
	return out
}

// eventColumns are the columns of audit_events, as in migrations/.
var eventColumns = []colSpec[eventRow]{
	col("tenant_id", func(r *eventRow) string { return r.TenantID }),
	col("run_id", func(r *eventRow) string { return r.RunID }),
	col("seq", func(r *eventRow) uint64 { return r.Seq }),
	col("event_id", func(r *eventRow) string { return r.EventID }),
	col("type", func(r *eventRow) string { return r.Type }),
	col("platform_session_id", func(r *eventRow) string { return r.SessionID }),
	timeCol("occurred_at", func(r *eventRow) uint64 { return r.OccurredMs }),
	col("occurred_ms", func(r *eventRow) uint64 { return r.OccurredMs }),
	timeCol("emitted_at", func(r *eventRow) uint64 { return r.EmittedMs }),
	col("emitted_ms", func(r *eventRow) uint64 { return r.EmittedMs }),
	col("actor_type", func(r *eventRow) string { return r.ActorType }),
	col("actor_id", func(r *eventRow) string { return r.ActorID }),
	col("command_id", func(r *eventRow) string { return r.CommandID }),
	col("command_type", func(r *eventRow) string { return r.CommandType }),
	col("idempotency_key", func(r *eventRow) string { return r.IdempotencyKey }),
	col("item_id", func(r *eventRow) string { return r.ItemID }),
	col("item_type", func(r *eventRow) string { return r.ItemType }),
	col("tool_name", func(r *eventRow) string { return r.ToolName }),
	col("arguments", func(r *eventRow) string { return r.Arguments }),
	col("status", func(r *eventRow) string { return r.Status }),
	col("decision", func(r *eventRow) string { return r.Decision }),
	col("scope", func(r *eventRow) string { return r.Scope }),
	col("rule_id", func(r *eventRow) string { return r.RuleID }),
	col("approval_id", func(r *eventRow) string { return r.ApprovalID }),
	col("grant_id", func(r *eventRow) string { return r.GrantID }),
	col("reason", func(r *eventRow) string { return r.Reason }),
	col("error_code", func(r *eventRow) string { return r.ErrorCode }),
	col("message", func(r *eventRow) string { return r.Message }),
	withHash(col("exit_code", func(r *eventRow) *int32 { return r.ExitCode }), "ifNull(toString(exit_code), 'NULL')"),
	col("pause_reason", func(r *eventRow) string { return r.PauseReason }),
	col("agent_id", func(r *eventRow) string { return r.AgentID }),
	col("model", func(r *eventRow) string { return r.Model }),
	col("total_tokens", func(r *eventRow) uint32 { return r.TotalTokens }),
	col("payload", func(r *eventRow) string { return r.Payload }),
	position(col("kafka_partition", func(r *eventRow) int32 { return r.Partition })),
	position(col("kafka_offset", func(r *eventRow) int64 { return r.Offset })),
}

// commandColumns are the columns of audit_commands, as in migrations/; the
// server fills them (audit_mv1_commands), Checksums reads them.
var commandColumns = []string{
	"tenant_id", "run_id", "seq", "event_id", "command_id", "command_type", "idempotency_key",
	"outcome", "code", "message", "original_command_id", "original_outcome", "created_run_id",
	"actor_type", "actor_id", "command", "occurred_at", "occurred_ms",
}

func withHash[R any](s colSpec[R], expr string) colSpec[R] {
	s.hash = expr
	return s
}

func position[R any](s colSpec[R]) colSpec[R] {
	s.view = false
	return s
}
