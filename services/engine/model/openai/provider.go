package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// Provider calls an OpenAI-compatible Chat Completions endpoint. It is safe
// for concurrent use.
type Provider struct {
	cfg     Config
	url     string
	secrets []string
	// sleep waits between attempts; tests replace it to observe the waits.
	sleep func(ctx context.Context, d time.Duration) error
}

var _ model.Provider = (*Provider)(nil)

// New returns a Provider for cfg, or the configuration's problems.
func New(cfg Config) (*Provider, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("openai provider config: %w", err)
	}
	u, _ := endpoint(cfg.BaseURL) // Validate checked it
	return &Provider{cfg: cfg, url: u, secrets: cfg.secrets(), sleep: sleepCtx}, nil
}

// attemptInfo is what one attempt reports to the retry loop.
type attemptInfo struct {
	delivered  bool          // onDelta was called
	retryAfter time.Duration // the server's Retry-After, 0 if none
}

// Stream implements model.Provider. It sends req, calls onDelta with each
// piece of text or reasoning in order, and returns the complete response.
//
// A failed attempt is repeated, up to MaxRetries times with backoff, only if
// no delta reached onDelta yet and the failure is transient (429, 408, 5xx,
// a transport error, a stream that broke or timed out before the first
// byte). Once output has streamed, a failure ends the call with the partial
// response and a non-retryable *model.Error. When ctx ends, Stream returns
// what arrived so far and ctx.Err(). Every other failure is a *model.Error
// whose message never contains the API key.
func (p *Provider) Stream(ctx context.Context, req model.Request, onDelta func(model.Delta)) (model.Response, error) {
	name := cmpOr(req.Model, p.cfg.Model)
	if name == "" {
		return model.Response{}, &model.Error{Code: "no_model", Message: "no model: set Config.Model or Request.Model"}
	}
	body, err := encodeRequest(name, req)
	if err != nil {
		return model.Response{}, &model.Error{Code: "bad_request", Message: p.redact(err.Error())}
	}
	if onDelta == nil {
		onDelta = func(model.Delta) {}
	}
	for attempt := 0; ; attempt++ {
		res, info, err := p.attempt(ctx, body, onDelta)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if info.delivered || !isRetryable(err) || attempt >= p.cfg.MaxRetries {
			return res, err
		}
		wait := info.retryAfter
		if wait == 0 {
			wait = p.cfg.Backoff(attempt + 1)
		}
		if err := p.sleep(ctx, wait); err != nil {
			return res, err
		}
	}
}

func isRetryable(err error) bool {
	var me *model.Error
	return errors.As(err, &me) && me.Retryable
}

// newRequest builds the HTTP request for one attempt.
func (p *Provider) newRequest(ctx context.Context, body []byte) (*http.Request, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "text/event-stream")
	if p.cfg.APIKey != "" {
		r.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	for k, v := range p.cfg.ExtraHeaders {
		r.Header.Set(k, v)
	}
	return r, nil
}
