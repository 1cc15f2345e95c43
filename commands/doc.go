// Package commands holds the intents of xbot: the command envelope, the five
// command types with their validation, the stable error codes, and admission —
// the pure decision of what a command does to a run in a given state.
//
// Guarantees: Validate accepts only envelopes that the executor can process;
// everything it refuses is answered by the API with a 4xx problem and never
// reaches Kafka. Admit is deterministic: the same run state and command always
// give the same decision, so replaying the commands topic cannot change an
// outcome.
package commands
