// Package clientcheck proves that clients generated from the API's OpenAPI
// document compile with no hand edits, so that a change of the document
// that breaks a generator fails CI. Its test (build tag clients, `go tool
// task test-clients`) takes both documents a running API serves
// (api.Document: /openapi.json, 3.1, and /openapi-3.0.json, 3.0) and
//
//   - generates a Go client of each with oapi-codegen (types and client),
//     the version pinned as a tool of the module in goclient/go.mod, and
//     builds and vets it with goclient/usage, a program that uses it;
//   - generates the TypeScript types of each with openapi-typescript and
//     compiles them with tsc --strict together with tsclient/usage.ts, which
//     calls the API through openapi-fetch; the npm packages are pinned by
//     tsclient/package-lock.json and installed with npm ci.
//
// The generated code is never committed. The usage programs pin what a
// client relies on: one Problem type for every error answer, with the error
// registry's codes; events typed by their type (a discriminated union);
// camelCase parameters.
//
// Without go, node or npm, or without a registry to fetch the pinned
// versions from, the test skips, unless the environment has CI=true, where
// it fails.
package clientcheck
