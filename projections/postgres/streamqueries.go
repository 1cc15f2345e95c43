package postgres

// Queries of the UI stream's backfill (projections/uistream): a run's events
// decoded, and a session's runs in session order, by (created_at, run_id).
