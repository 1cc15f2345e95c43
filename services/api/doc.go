// Package api is xbot's HTTP API: huma v2 on net/http, with the
// OpenAPI 3.1 document at /openapi.json (3.0 at /openapi-3.0.json), docs at
// /docs and JSON Schemas under /schemas.
//
// Command endpoints (createRun, cancelRun, appendUserInput) validate a request,
// turn it into a commands.Envelope and hand it to a CommandSender, which
// durably produces it to xbot.commands.v1. They answer 202 with the command's
// outcome as the read model reports it, or "pending" when the outcome is not
// known within the requested wait: a pending command is durably queued and
// its outcome can be polled at GET /v1/commands/{commandId}. A retried
// request with the same Idempotency-Key lands on the same run (the runId of a
// CreateRun is derived from tenant and key) and is answered "duplicate" with
// the original command's id.
//
// Query endpoints read the read models through a Store, as the API's own
// records (RunRecord, CommandRecord, …); the wiring adapts the Postgres read
// models to it, so this package links no database or Kafka client. Every /v1
// request is scoped to the tenant of its bearer token; another tenant's runs
// and commands are reported as not found (404, never 403).
//
// Every error is an RFC 9457 problem (application/problem+json) with a stable
// `code` from events.Code*, including huma's own validation errors and
// unknown routes. Times in responses are Unix milliseconds, like every time on
// the wire.
//
// Tokens and request bodies are never logged.
package api
