// Package mcptest is the test kit of MCP: a server built with the official
// Go SDK whose tools exercise what the runtime must handle (text, images,
// structured results, errors, a call that waits to be cancelled, a process
// that crashes mid-call, the headers a call carried), served over
// streamable HTTP, SSE, or — by re-executing the test binary — stdio.
// Imported by tests only.
package mcptest
