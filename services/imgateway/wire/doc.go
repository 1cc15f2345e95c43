// Package wire holds the frames of the sandbox IM channel (docs/im.md): the
// inbound message frame a client sends, the ready, reply and error frames the
// gateway sends, and the reversible mapping of a conversation (endpoint,
// type, id) onto a platformSessionId.
//
// Guarantees: ParseInbound never fails (a frame that is not a JSON object is
// plain text, as the seed says); SessionID and ParseSessionID are inverse on
// every conversation whose session id fits the session id pattern.
package wire
