// Package client is the Go client of xbot's HTTP API (services/api): every
// endpoint as a typed method, with the bearer token, idempotency, retries,
// outcome polling, paging and resumable streams done for the caller. It
// depends on the standard library and xbot's events package only.
//
//	c, err := client.New(client.Config{BaseURL: os.Getenv("XBOT_URL"), Token: os.Getenv("XBOT_TOKEN")})
//	res, err := c.CreateRun(ctx, client.CreateRunRequest{AgentID: "demo", Input: client.UserInput{Content: "hi"}}, client.CommandOptions{})
//	run, err := c.AwaitRun(ctx, res.RunID, client.RunEnded)
//
// # Errors
//
// An answer outside 2xx is a *Problem carrying the HTTP status, the stable
// error code (schemas/v1/errors.json) and the detail. A command the executor
// refused (its endpoint answers 202 with outcome rejected) is a
// *RejectedError with the code, the registry's status and the detail. Both
// match the sentinels generated from the registry (errors_gen.go), so a
// caller branches with errors.Is(err, client.ErrInvalidState) or
// errors.As(err, &problem), never on a detail text.
//
// # Commands
//
// Every command is sent with an Idempotency-Key: the caller's
// (CommandOptions.IdempotencyKey) or one the client generates for the call
// (returned in the result). A request that fails with a network error or a
// 502, 503 or 504 answer is sent again under the same key, up to
// Config.Retry's bounds, with backoff and the server's Retry-After, so a
// retry is answered duplicate rather than applied twice. The server waits up
// to ?wait= for the outcome (CommandOptions.Wait); while the outcome is
// still pending the client polls GET /v1/commands/{commandId}, up to
// Config.PendingTimeout. Reads are retried the same way.
//
// # Lists and streams
//
// Lists page as the API does: ListEvents and EventPages by seq
// (nextAfterSeq), the other lists by cursor (Page, NextCursor). The
// iterators Runs, SessionRuns, Approvals, Items and Events read every page
// as the loop asks for more; the All… methods collect every row. Events come
// back as the log's own envelopes (events.Envelope); DecodePayload reads a
// payload as its registered type.
//
// RunChunks and SessionChunks yield a reply's UI message chunks (the Vercel
// AI SDK's format, typed as Chunk) and reconnect by themselves after a
// dropped connection with Last-Event-ID, so a loop sees every chunk once.
// The agentruntime package builds the runtime client contract on them.
//
// NewRequest, Send and Do are the raw layer under the typed methods, for
// callers that test the API's answers themselves (status codes, headers,
// bytes of a stream); they send a request once, as it is.
package client
