// Package engine groups the libraries a running run is made of: the agent
// loop (agentloop) and what it uses — model providers (model), the built-in
// tools (tools), sandboxes (compute), tool-call policy (policy) and agent
// profiles with their frozen snapshots (profile). None of them reaches
// Kafka; the executor (services/executor) owns the log and drives them.
package engine
