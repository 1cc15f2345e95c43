// Package mcp connects a run to the MCP servers of its agent profile with
// the official Go SDK: a stdio server is a command run inside the run's
// sandbox (compute.Sandbox.Exec over pipes), so it has the run's isolation,
// limits and environment and no secret; a remote server is called by the
// runtime over streamable HTTP (or the older HTTP+SSE transport) with
// headers whose secret values the runtime puts in (Secrets), on the
// server's own origin only and never through a redirect.
//
// Nothing here decides what the model sees or what the log records: the
// agent loop lists a server's tools once, when a run starts, into the run's
// capability snapshot, and records every call as an mcp_tool_call item.
// What a server returns is scrubbed of every secret's spellings
// (Secrets.Scrub) before it reaches an item, a log line or the model.
package mcp
