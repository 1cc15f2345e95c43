package web

import "embed"

// Files holds the chat page: index.html, with everything it loads inline.
// A gateway serves index.html on GET of an endpoint's mount path.
//
//go:embed index.html
var Files embed.FS

// Page is the name of the chat page in Files.
const Page = "index.html"
