//go:build browser

package browser_test

import (
	"net/http"
	"net/http/httputil"
	"net/url"
)

// bff is the page's backend-for-frontend, as docs/clients.md describes it:
// it serves the page and forwards /api/… to xbot's API with the bearer
// token added, so the token never reaches the browser. Streams pass through
// as they come (FlushInterval -1), and a browser that leaves (a reload)
// cancels its upstream request.
func bff(site string, api *url.URL, token string) http.Handler {
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(api)
			r.Out.Header.Set("Authorization", "Bearer "+token)
			r.Out.Header.Del("Cookie") // the BFF's own session, not the API's business
		},
		FlushInterval: -1,
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", proxy))
	mux.Handle("/", http.FileServer(http.Dir(site)))
	return mux
}
