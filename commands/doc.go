// Package commands holds the intents of xbot: the command envelope, the six
// command types with their validation, and admission — the pure decision of
// what a command does to a run in a given state. Each command type decides
// for itself (create.go, cancel.go, input.go, approval.go, compaction.go,
// revoke.go): given the run's state it returns the outcome, the events that record it,
// the commands to send and what the executor does next. Outcomes and error
// codes are the log's words and live in package events.
//
// Guarantees: Validate accepts only envelopes that the executor can process;
// everything it refuses is answered by the API with a 4xx problem and never
// reaches Kafka. Admit is deterministic: the same run state and command always
// give the same decision, events included, so replaying the commands topic
// cannot change an outcome.
//
// Commands are authenticated: the API and the executors share a KeyRing,
// the API signs every record (HMAC-SHA256 of its key and value, in headers)
// and the executor admits nothing it cannot verify, so a record produced by
// anyone else who reaches the broker changes no run. An idempotency key
// remembers the Fingerprint of the request that first used it; another
// request under the same key is rejected idempotency_key_reused.
package commands
