package api

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
)

// handlerErrorsKey is the huma.Operation.Metadata entry under which register
// keeps the statuses an operation's handler answers itself.
const handlerErrorsKey = "xbot.handlerErrors"

// problemDescriptions describes each error status an operation may declare,
// with the codes it carries (schemas/v1/errors.json).
var problemDescriptions = map[int]string{
	http.StatusBadRequest: "The body is not JSON, or a body the operation needs is missing (validation_failed).",
	http.StatusUnauthorized: "No valid bearer token (unauthorized); the answer carries " +
		"`WWW-Authenticate: Bearer`.",
	http.StatusForbidden: "The credential's scopes do not allow this (forbidden_scope), or per-run options ask " +
		"for more than the agent's profile allows (option_not_allowed).",
	http.StatusNotFound: "No such resource in the caller's tenant (run_not_found, command_not_found, not_found); " +
		"another tenant's resources answer the same.",
	http.StatusConflict:              "The request conflicts with what the API remembers (idempotency_key_expired).",
	http.StatusRequestEntityTooLarge: "The body is larger than the API accepts (payload_too_large).",
	http.StatusUnsupportedMediaType:  "The body's Content-Type is not JSON (validation_failed).",
	http.StatusUnprocessableEntity: "A parameter, header or body field is invalid (validation_failed; " +
		"idempotency_key_reused; invalid_encoding for text that is not UTF-8 or holds NUL): `errors` names each by location.",
	http.StatusTooManyRequests: "Too many open streams for the credential or the instance (too_many_streams); " +
		"retry after Retry-After seconds.",
	http.StatusInternalServerError: "An internal error (internal); the detail says nothing more.",
	http.StatusServiceUnavailable: "A dependency is unavailable (unavailable), or a command was not sent within the " +
		"API's write timeout and may still be queued; retry (after Retry-After seconds when given), a command with " +
		"the same Idempotency-Key.",
}

// errorStatuses are the error statuses op can answer: those of its handler
// (handlerErrorsKey), and those the shape of every operation implies —
//
//   - 422 and 500 always: checkEncoding refuses a path, query or id header
//     that is not UTF-8 text (invalid_encoding) on every route, and a
//     handler's unexpected error or panic is answered 500 internal;
//   - 401 with a security requirement (authenticate), and 403 when the
//     operation is not a read (a read-only credential);
//   - 503 when the operation is not a read: a command not sent within the
//     write timeout (intake.go);
//   - 400, 413 and 415 with a request body (huma: not JSON or missing;
//     checkEncoding and huma: too large; huma: another content type).
func errorStatuses(op *huma.Operation) []int {
	out := []int{http.StatusUnprocessableEntity, http.StatusInternalServerError}
	if own, ok := op.Metadata[handlerErrorsKey].([]int); ok {
		out = append(out, own...)
	}
	if !isRead(op.Method) {
		out = append(out, http.StatusServiceUnavailable)
	}
	if len(op.Security) > 0 {
		out = append(out, http.StatusUnauthorized)
		if !isRead(op.Method) {
			out = append(out, http.StatusForbidden)
		}
	}
	if op.RequestBody != nil {
		out = append(out, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// declareErrors is an OnAddOperation hook: it replaces the error responses
// huma derived (and its "default") with exactly errorStatuses(op), each a
// Problem.
func declareErrors(_ *huma.OpenAPI, op *huma.Operation) {
	for status := range op.Responses {
		if n, err := strconv.Atoi(status); status == "default" || (err == nil && n >= http.StatusBadRequest) {
			delete(op.Responses, status)
		}
	}
	problem := &huma.Schema{Ref: schemaPrefix + "Problem"}
	for _, status := range errorStatuses(op) {
		desc, ok := problemDescriptions[status]
		if !ok {
			panic("api: no problem description for status " + strconv.Itoa(status)) // a wiring bug
		}
		resp := &huma.Response{Description: desc,
			Content: map[string]*huma.MediaType{"application/problem+json": {Schema: problem}}}
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			resp.Headers = map[string]*huma.Header{"Retry-After": {Description: "Seconds to wait before retrying.",
				Schema: &huma.Schema{Type: huma.TypeInteger}}}
		}
		op.Responses[strconv.Itoa(status)] = resp
	}
	op.Errors = errorStatuses(op)
}
