// Package browser holds xbot's headless browser test (build tag browser,
// `go tool task test-browser`): a chat page built with the Vercel AI SDK's
// useChat and the chat transport in web/transport.js, served by a
// backend-for-frontend that adds the bearer token, against a real xbot
// system, in Debian's Chromium driven by playwright-core. The page sends a
// message and watches the reply stream, approves a tool call with a click,
// is reloaded mid-reply and resumes the reply, and sends a second message,
// the session's next run; it also calls the API from an allowed and from a
// disallowed origin (CORS). Screenshots of every step go
// to $XBOT_ARTIFACTS/browser, or artifacts/browser at the repository's root.
// docs/clients.md describes the transport and the pattern.
//
// The package has no code of its own; its files are the test and the web
// page (web/, npm packages pinned by web/package-lock.json).
package browser
