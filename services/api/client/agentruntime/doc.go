// Package agentruntime is the runtime client contract over xbot's API: one
// live connection to one conversation (a platform session), member by
// member — Submit, Events, State, Answer, Interrupt, Committed,
// Capabilities, Close — reporting the contract's closed set of events.
// docs/clients.md has the whole mapping; in short:
//
//   - Submit(input) is POST /v1/sessions/{id}/messages with the input id as
//     Idempotency-Key, so it is idempotent by input id; a refusal is an
//     *InputRefusedError with the stable code.
//   - Events(after) reads GET /v1/sessions/{id}/stream (the AI SDK UI
//     message chunks of the session's replies) after the cursor's chunk id
//     and maps the chunks of each log event at once: a reply's start chunk
//     is ResponseStarted (its run id is the response id) with InputAdmitted
//     for each input id it answers (later ones when a message-metadata chunk
//     adds a steer's or an answer's); every chunk of the reply is a
//     ResponseOutput with the chunk as the frame; an open data-interaction
//     is InteractionOpened before the chunks that show it, a closed one
//     InteractionClosed (answered, withdrawn, expired); the reply's last
//     finish (or abort) is ResponseEnded; data-status is StatusChanged; a
//     part outside any reply is a ResponseOutput without a response id.
//   - State() is GET /v1/sessions/{id}/state with a cursor Events continues
//     from; Answer() decides an approval or answers a question;
//     Interrupt(cancelQueued) is POST /v1/sessions/{id}/interrupt;
//     Capabilities() is GET /v1/agents/{agentId}; Committed is a no-op, as
//     xbot keeps the log; Close ends the client's iterators, not the
//     conversation.
//
// # Cursors
//
// A Cursor's position is the session stream's chunk id after which to read,
// how many of the next log event's events were already yielded, and the
// mapping's state there (the open reply and the inputs it reported). The
// session stream is deterministic, so the same cursor yields the same
// events after it for any reader and across reconnects; the stream resumes
// by itself after a dropped connection (client.SessionChunks).
package agentruntime
