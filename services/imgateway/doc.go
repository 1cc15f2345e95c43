// Package imgateway is the sandbox IM gateway (docs/im.md): WebSocket
// endpoints speaking the sandbox wire protocol (package wire), a client of
// the HTTP API in both directions.
//
// Inbound, a client's frame becomes a session message
// (POST /v1/sessions/{platformSessionId}/messages) or an approval decision,
// sent with the client's own bearer token, so the API's checks apply to the
// person behind the socket, never to the gateway. Outbound, the messages of
// xbot.im.outbox.v1 go to the connected client of their conversation's
// endpoint.
//
// Guarantees:
//
//   - One connection per endpoint: a new client replaces the old (close
//     4000), Close closes 1001, a Reload that changes or removes an endpoint
//     closes its client 1012.
//   - Outbound delivery is at least once, in outbox order per conversation,
//     deduped by message id within a connection's recent window: an
//     endpoint's position (its own consumer group) is committed only after
//     the frame was written to its client, so what arrives while no client
//     is connected waits on the log and comes on the next connection.
//   - The token is never logged; a read-only token's messages are never sent
//     to the API.
package imgateway
