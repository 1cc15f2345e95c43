// Package runnertest is the test kit of projector benchmarks: run logs as the
// agent loop writes them (deltas, items, tool calls) produced to a Kafka
// topic, and a runner that times a projector from those records to its
// committed writes. Imported by tests only.
package runnertest
