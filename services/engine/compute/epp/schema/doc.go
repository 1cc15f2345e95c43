// Package schema reads EPP/1's published method table (docs/epp-methods.json)
// as data and checks messages against it: every required field present,
// every field of its type, and — strictly — no field the table does not
// list.
//
// It imports nothing of the host, so that a plugin written from the
// published table alone (cmd/local-process) checks what it is sent with
// the same rules as the tests that check what the host sends.
package schema
