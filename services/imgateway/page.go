package imgateway

import (
	_ "embed"
	"net/http"
)

// placeholderPage is served at an endpoint's path until the chat page of
// services/imgateway/web is part of the build: it says how to connect.
//
//go:embed placeholder.html
var placeholderPage []byte

// servePage answers GET of an endpoint's path with the chat page.
func servePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(placeholderPage)
}
