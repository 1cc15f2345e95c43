// Package stack assembles xbot's components — HTTP API, executor, the
// projectors — from one set of options, so that `xbot dev`, the split-mode
// subcommands and the system tests (services/systemtest) wire the system the
// same way.
package stack
