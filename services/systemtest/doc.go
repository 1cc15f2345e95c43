// Package systemtest holds xbot's system-level suites, each a whole system
// assembled by services/stack from real parts (Kafka protocol on kfake, a
// real PostgreSQL and ClickHouse, bwrap): end to end through the HTTP API,
// governance, tenant isolation and principals, sandbox isolation and
// resource limits, output limits, forged commands, crash takeover (-run
// Killed), the chaos suite (build tag chaos) and the end-to-end benchmarks.
// The suites reach the API through its typed client (services/api/client);
// the tests about HTTP itself go through one raw helper. It has no code of
// its own outside its tests.
package systemtest
