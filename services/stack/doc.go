// Package stack assembles xbot's components — HTTP API, executor, Postgres
// projector — from one set of options, so that `xbot dev`, the split-mode
// subcommands and the end-to-end tests wire the system the same way.
package stack
