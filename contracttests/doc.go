// Package contracttests holds conformance suites that any implementation of
// xbot's contracts can run against itself:
//
//   - LogInvariant (with KafkaSource, CommandsAccounted, CheckStreamedOutput):
//     every run's events are gap-free from seq 1, on their run's partition,
//     every command record admitted once or dead-lettered, streamed output
//     within its run's limit — checked on the events topic and on the
//     Postgres read model;
//   - ComputeProvider: a compute provider's layout, path containment, exec,
//     timeouts, cancel and kill, secrets, isolation (kernel settings, host
//     uid, host paths) and resource limits;
//   - APIBoundary: against a live API, who the caller is (read-only tokens,
//     actor and owner from the credential), bad text and ids refused with a
//     4xx and a stable code, idempotency keys not reusable for another
//     request, links not built from the Host header.
package contracttests
