// Package web is the IM gateway's sandbox chat page and the history it
// shows after a refresh.
//
// Files holds index.html, the whole page: its styles and script are inline,
// so the page loads nothing but itself and works under any mount path
// (/sandbox, /sandbox/<endpoint id>) without asset routes. The page speaks
// the sandbox wire protocol (services/imgateway/wire) over a WebSocket on
// its own path: it takes the credential from its ?token= query and keeps it
// in memory only (passed on as ?token= on the socket URL and as a bearer
// token to the history route), shows the ready frame, sends messages with a
// fresh messageId each, renders reply frames per conversation (text,
// questions, approval requests whose action segments are buttons that send
// the action back), shows error frames and close codes, and reconnects with
// backoff, except after close 4000 (another client took the endpoint), when
// it waits for the user. A reply that arrives twice (live and from the
// history) is shown once, by its messageId.
//
// HistoryHandler answers GET <mount path>/history?type=&id=: a
// conversation's messages read from the session's read model (its runs and
// their items) through the API as the caller, so what a refreshed page shows
// is what the API lets that credential read.
package web
