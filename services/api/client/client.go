package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API's base URL, e.g. "http://127.0.0.1:8080". Required.
	BaseURL string
	// Token is the bearer token sent with every request. Empty sends none
	// (only /healthz and the documents answer without one).
	Token string
	// HTTP sends the requests. Default http.DefaultClient.
	HTTP *http.Client
	// Retry is how a typed method retries a request that failed with a
	// network error or a 502, 503 or 504 answer. Zero fields take the
	// defaults (RetryPolicy).
	Retry RetryPolicy
	// PendingTimeout bounds how long a command method polls
	// GET /v1/commands/{commandId} while the outcome is pending (the
	// server's ?wait= ran out). Default 2 minutes; a negative value never
	// polls. The context's deadline, when sooner, wins.
	PendingTimeout time.Duration
}

// DefaultPendingTimeout is Config.PendingTimeout's default: far longer than
// a command takes to be admitted while Kafka is up, short enough that a
// caller learns of an outage.
const DefaultPendingTimeout = 2 * time.Minute

func (c *Config) setDefaults() {
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.HTTP == nil {
		c.HTTP = http.DefaultClient
	}
	if c.PendingTimeout == 0 {
		c.PendingTimeout = DefaultPendingTimeout
	}
	c.Retry.setDefaults()
}

// Validate reports every problem of the config.
func (c Config) Validate() error {
	var errs []error
	if c.BaseURL == "" {
		errs = append(errs, errors.New("client: BaseURL is required"))
	} else if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		errs = append(errs, fmt.Errorf("client: BaseURL %q is not an http or https URL", c.BaseURL))
	}
	errs = append(errs, c.Retry.validate()...)
	return errors.Join(errs...)
}

// Client calls the API of one deployment as one principal. It is safe for
// concurrent use.
type Client struct {
	cfg Config
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Client{cfg: cfg}, nil
}

// WithToken returns a client of the same API that sends token instead.
func (c *Client) WithToken(token string) *Client {
	cfg := c.cfg
	cfg.Token = token
	return &Client{cfg: cfg}
}

// BaseURL returns the API's base URL, without a trailing slash.
func (c *Client) BaseURL() string { return c.cfg.BaseURL }

// NewRequest builds a request of path (with its query) under the base URL,
// with the bearer token and a JSON content type. body is nil (no body), a
// string or []byte (sent as it is) or a value sent as its JSON encoding; hdr
// is header name, value pairs. It is the raw layer: nothing is retried.
func (c *Client) NewRequest(ctx context.Context, method, path string, body any, hdr ...string) (*http.Request, error) {
	raw, err := encodeBody(method, path, body)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.BaseURL+path, rd)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", method, path, err)
	}
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req, nil
}

// encodeBody is the bytes of a request body: nil for none.
func encodeBody(method, path string, body any) ([]byte, error) {
	switch b := body.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(b), nil
	case []byte:
		return b, nil
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s body: %w", method, path, err)
	}
	return raw, nil
}

// Do sends req with the client's HTTP client, once. The caller closes the
// body.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	return resp, nil
}

// Send builds and sends a request once (NewRequest, Do). The caller closes
// the body.
func (c *Client) Send(ctx context.Context, method, path string, body any, hdr ...string) (*http.Response, error) {
	req, err := c.NewRequest(ctx, method, path, body, hdr...)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// call sends a request, retried as Config.Retry says, and decodes a 2xx
// answer into out (unless out is nil); any other answer is returned as a
// *Problem.
func (c *Client) call(ctx context.Context, method, path string, body, out any, hdr ...string) error {
	resp, err := c.send(ctx, method, path, body, hdr...)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return readProblem(method, path, resp)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode HTTP %d answer: %w", method, path, resp.StatusCode, err)
	}
	return nil
}
