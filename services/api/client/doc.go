// Package client is a typed Go client of xbot's HTTP API (services/api): the
// request and answer types of the endpoints, the bearer token, the
// Idempotency-Key header and the ?wait= parameter of command endpoints.
//
// Every answer outside 2xx is returned as a *Problem error carrying the HTTP
// status and the stable error code (schemas/v1/errors.json); branch on
// Problem.Code with errors.As, never on the detail text. A command endpoint
// answers 202 with a CommandResult whatever the command's outcome
// (accepted, rejected, duplicate, no_effect, applied, or pending when the
// wait ran out): its Outcome says which.
//
// Lists page as the API does: ListEvents and EventPages by seq
// (nextAfterSeq), the other lists by cursor (Page, NextCursor); the All…
// methods read every page. Events come back as the log's own envelopes
// (events.Envelope); DecodePayload reads a payload as its registered type.
//
// NewRequest and Do are the raw layer under the typed methods, for callers
// that test the API's answers themselves (status codes, headers, streams).
package client
