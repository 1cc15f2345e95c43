package events

// The views of the log: each names the projector that keeps it, that
// projector's consumer group ("xbot-projector-<name>") and its checkpoints.
const (
	// ViewPostgres is the Postgres read models (runs, items, commands, ...).
	ViewPostgres = "postgres"
	// ViewClickHouse is the ClickHouse audit.
	ViewClickHouse = "clickhouse"
	// ViewIM is the IM view (messages for chat platforms).
	ViewIM = "im"
)

// Views lists every view of the log.
func Views() []string { return []string{ViewPostgres, ViewClickHouse, ViewIM} }
