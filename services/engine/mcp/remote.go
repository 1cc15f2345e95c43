package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// remoteTransport is the client transport of a remote server: streamable
// HTTP or HTTP+SSE, over a client that adds the server's headers.
func remoteTransport(srv profile.MCPServer, secrets *Secrets) (sdk.Transport, error) {
	u, err := url.Parse(srv.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	headers := http.Header{}
	for name, tmpl := range srv.Headers {
		v, err := secrets.Expand(tmpl)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", name, err)
		}
		headers.Set(name, v)
	}
	client := &http.Client{
		Transport: &headerTransport{base: baseTransport(), origin: origin(u), headers: headers},
		// A redirect would carry the headers elsewhere; MCP servers answer
		// at their endpoint.
		CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect },
	}
	if srv.TransportOrDefault() == profile.TransportSSE {
		return &sdk.SSEClientTransport{Endpoint: srv.URL, HTTPClient: client}, nil
	}
	return &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: client, MaxRetries: remoteRetries}, nil
}

// remoteRetries is how often the streamable transport reconnects its
// stream before the connection counts as broken: a rolling restart of the
// server, not an outage.
const remoteRetries = 3

var errRedirect = errors.New("the MCP server answered with a redirect, which is not followed (headers would go elsewhere)")

// baseTransport is a fresh transport with the default's settings and
// timeouts on connecting and on the response's headers; a call's own
// duration is bounded by its context.
func baseTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 0 // a streamable response may be an SSE stream that waits
	t.TLSHandshakeTimeout = 10 * time.Second
	t.Proxy = nil // the operator's server, reached directly (no proxy variables of the executor)
	return t
}

func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// headerTransport adds the server's headers to requests to its origin,
// and to no other.
type headerTransport struct {
	base    http.RoundTripper
	origin  string
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if origin(req.URL) != t.origin {
		return nil, fmt.Errorf("MCP request to another origin than the server's (%s) refused", t.origin)
	}
	r := req.Clone(req.Context())
	for name, vs := range t.headers {
		r.Header[name] = vs
	}
	return t.base.RoundTrip(r)
}
