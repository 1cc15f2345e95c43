// Package schemas holds the wire contracts of xbot as data: the JSON Schemas
// (draft 2020-12) of the command and event envelopes and of every payload,
// the error-code registry, and golden examples, all under v1/.
//
// Guarantees, kept by this package's tests against the Go types in commands
// and events:
//
//   - every command type (commands.Types) and every event type
//     (events.Catalog) has a payload schema, and its envelope schema
//     dispatches on type to it;
//   - the properties of every schema are exactly the JSON fields of the Go
//     type, and its required properties are exactly the fields without
//     omitempty;
//   - every valid example decodes with the Go decoder, validates against its
//     envelope schema and re-encodes to the same JSON; every invalid example
//     is rejected by both the schema and the Go validator (on the same field,
//     for commands);
//   - errors.json lists exactly the codes of events.Codes.
//
// The schemas cannot express two rules that commands.Validate enforces:
// payload.sandboxKey.tenantId must equal the envelope's tenantId, and length
// limits are counted in UTF-8 bytes (JSON Schema counts characters, so for
// non-ASCII text the Go validator is the stricter one).
//
// Readers ignore unknown fields, so no schema forbids additional properties;
// the round-trip tests are what keep the examples free of stray fields.
//
// This package imports only the standard library.
package schemas
