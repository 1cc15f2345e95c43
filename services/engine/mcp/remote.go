package mcp

import (
	"errors"
	"fmt"
	"io"
	"mime"
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
	resp, err := t.base.RoundTrip(r)
	if err == nil && resp.Body != nil && !isEventStream(resp.Header.Get("Content-Type")) {
		resp.Body = &boundedBody{ReadCloser: resp.Body, left: maxBodyBytes}
	}
	return resp, err
}

// maxBodyBytes bounds a response body that is not an event stream: one
// JSON-RPC message, which the SDK reads whole into memory. It is the SDK's
// own bound on a stdio message and on an event of a stream.
const maxBodyBytes = sdk.DefaultMaxLineLength

// ErrAnswerTooLarge means a remote server's answer was larger than the
// runtime reads (maxBodyBytes); the connection is dropped.
var ErrAnswerTooLarge = fmt.Errorf("the MCP server's answer is larger than %d MiB", maxBodyBytes>>20)

func isEventStream(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "text/event-stream"
}

// boundedBody fails a read past its bound with ErrAnswerTooLarge.
type boundedBody struct {
	io.ReadCloser
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		if n, err := b.ReadCloser.Read(make([]byte, 1)); n == 0 && errors.Is(err, io.EOF) {
			return 0, io.EOF // exactly at the bound
		}
		return 0, ErrAnswerTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
