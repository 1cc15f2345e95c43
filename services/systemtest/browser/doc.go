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
// It also drives the IM gateway's sandbox chat page (services/imgateway/web)
// with web/im.mjs: against a scripted endpoint of the wire protocol
// (TestSandboxPageInABrowser: chat, approval, history after a reload, a
// group conversation, the closes 1012 and 4000, an error frame) and against a real system with the
// gateway (TestIMChatInABrowser); their screenshots go to browser/sandbox-page
// and browser/im under the same directory.
//
// The package has no code of its own; its files are the tests and the web
// pages and drivers (web/, npm packages pinned by web/package-lock.json).
package browser
