package events

// Code is a stable error code: the code of a rejected command
// (runtime.command.rejected) and of every API problem. The registry of every code, with its HTTP
// status and meaning, is schemas/v1/errors.json; a test keeps the two equal.
type Code string

// Stable error codes.
const (
	CodeValidationFailed Code = "validation_failed"
	CodeInvalidState     Code = "invalid_state"
	CodeRunNotFound      Code = "run_not_found"
	CodeRunAlreadyExists Code = "run_already_exists"
	CodeDuplicateCommand Code = "duplicate_command"
	CodeUnknownAgent     Code = "unknown_agent"
	CodeNotImplemented   Code = "not_implemented"
	CodeUnauthorized     Code = "unauthorized"
	CodeNotFound         Code = "not_found"
	CodePayloadTooLarge  Code = "payload_too_large"
	CodeUnavailable      Code = "unavailable"
	CodeInternal         Code = "internal"
	CodeCommandNotFound  Code = "command_not_found"
	// CodeApprovalNotPending: the decision names an item that does not await
	// approval (unknown, or already decided).
	CodeApprovalNotPending Code = "approval_not_pending"
	// CodeSandboxKeyMisrouted: a CreateRun's runId is not on its sandbox
	// key's partition (see commands.RunIDFor), so the run could not be scheduled
	// one-at-a-time with the key's other runs.
	CodeSandboxKeyMisrouted Code = "sandbox_key_misrouted"
	// CodeIdempotencyKeyReused: the idempotency key was already used for
	// this run by a command that asked for something else (another type or
	// payload). Nothing changed; send the new request with a new key.
	CodeIdempotencyKeyReused Code = "idempotency_key_reused"
	// CodeForbiddenScope: the credential is valid but its scopes do not
	// allow the request (a read-only token's command, another owner's
	// sandbox key, another actor's session, a forged X-Actor-Id).
	CodeForbiddenScope Code = "forbidden_scope"
	// CodeInvalidEncoding: a request body is not valid UTF-8 or holds a NUL
	// character (raw or escaped); it is refused, never rewritten.
	CodeInvalidEncoding Code = "invalid_encoding"
	// CodeTooManyStreams: the principal, or the instance, has as many open
	// streams as it allows; retry after Retry-After.
	CodeTooManyStreams Code = "too_many_streams"
	// CodeIdempotencyKeyExpired: a CreateRun repeats the key and body of a
	// run that ended longer ago than the API may hand its create to the
	// executor again (half of executor_remember_finished). The run is not
	// created again; send the new request with a new key.
	CodeIdempotencyKeyExpired Code = "idempotency_key_expired"
	// CodeOptionNotAllowed: a per-run option asks for more than the agent's
	// profile allows (a mode it does not list, network it forbids). Nothing
	// is downgraded; nothing reached Kafka.
	CodeOptionNotAllowed Code = "option_not_allowed"
)

// Codes lists every code.
func Codes() []Code {
	return []Code{CodeValidationFailed, CodeInvalidState, CodeRunNotFound, CodeRunAlreadyExists,
		CodeDuplicateCommand, CodeUnknownAgent, CodeNotImplemented, CodeUnauthorized, CodeNotFound,
		CodePayloadTooLarge, CodeUnavailable, CodeInternal, CodeCommandNotFound,
		CodeApprovalNotPending, CodeSandboxKeyMisrouted, CodeIdempotencyKeyReused, CodeForbiddenScope,
		CodeInvalidEncoding, CodeTooManyStreams, CodeIdempotencyKeyExpired, CodeOptionNotAllowed}
}
