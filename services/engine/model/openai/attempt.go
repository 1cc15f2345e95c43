package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// attempt makes one HTTP call and consumes its stream.
func (p *Provider) attempt(ctx context.Context, body []byte, onDelta func(model.Delta)) (model.Response, attemptInfo, error) {
	var info attemptInfo
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	fb := startFirstByte(p.cfg.Timeout, cancel)
	defer fb.stop()
	req, err := p.newRequest(actx, body)
	if err != nil {
		return model.Response{}, info, &model.Error{Code: "bad_request", Message: p.redact(err.Error())}
	}
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return model.Response{}, info, p.failed(fb, &model.Error{Code: "connection_error", Message: p.redact(err.Error()), Retryable: true})
	}
	defer func() { _ = resp.Body.Close() }()
	info.retryAfter = retryAfter(resp.Header, time.Now())
	rd := &firstByteReader{r: resp.Body, fb: fb}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(rd, maxErrorBody)) // a cut-short body still says something
		return model.Response{}, info, p.failed(fb, p.classify(resp.StatusCode, parseError(b), false))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		return model.Response{}, info, p.failed(fb, p.notAStream(rd))
	}
	res, err := p.consume(rd, onDelta, &info)
	if err != nil {
		err = p.failed(fb, err)
	}
	return res, info, err
}

// failed replaces err by a timeout error when the first-byte deadline is what
// cut the attempt short.
func (p *Provider) failed(fb *firstByte, err error) error {
	if fb.fired() {
		return &model.Error{Code: "timeout", Retryable: true,
			Message: fmt.Sprintf("no response within %s", p.cfg.Timeout)}
	}
	return err
}

// notAStream handles a 200 response carrying JSON: llama.cpp (before late
// 2025) and some proxies report errors that way.
func (p *Provider) notAStream(r io.Reader) error {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	var probe struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &probe) == nil && len(probe.Error) > 0 && string(probe.Error) != "null" {
		return p.classify(0, parseError(b), false)
	}
	return &model.Error{Code: "not_a_stream", Message: "the server answered with JSON instead of an event stream"}
}

// consume reads the event stream to its end, feeding onDelta.
func (p *Provider) consume(r io.Reader, onDelta func(model.Delta), info *attemptInfo) (model.Response, error) {
	var acc accumulator
	sr := newSSEReader(r)
	for {
		ev, err := sr.next()
		if errors.Is(err, errEventTooLarge) {
			return acc.result(), tooLarge(err.Error())
		}
		if err != nil {
			return acc.result(), p.endOfStream(err, acc.finished, info.delivered)
		}
		if strings.TrimSpace(ev.data) == "[DONE]" {
			return acc.result(), nil
		}
		d, err := p.event(ev, &acc, info.delivered)
		if err != nil {
			return acc.result(), err
		}
		if d.Text != "" || d.Reasoning != "" {
			info.delivered = true
			onDelta(d)
		}
	}
}

// event folds one event into acc, or reports the error it carries.
func (p *Provider) event(ev sseEvent, acc *accumulator, delivered bool) (model.Delta, error) {
	if ev.event == "error" {
		return model.Delta{}, p.classify(0, parseError([]byte(ev.data)), delivered)
	}
	var c chunk
	if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
		return model.Delta{}, &model.Error{Code: "bad_chunk", Retryable: !delivered,
			Message: p.redact(fmt.Sprintf("malformed chunk: %v", err))}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return model.Delta{}, p.classify(0, parseError([]byte(ev.data)), delivered)
	}
	d := acc.add(c)
	if acc.tooLarge() {
		return model.Delta{}, tooLarge(fmt.Sprintf("the response passed %d MiB", maxResponseBytes>>20))
	}
	return d, nil
}

// tooLarge is the error of a response or an event past its bound: the
// server would send as much again, so it is not retried.
func tooLarge(msg string) error { return &model.Error{Code: "response_too_large", Message: msg} }

// endOfStream judges a stream that stopped without [DONE]. A clean end after
// a finish_reason is accepted: not every server sends [DONE].
func (p *Provider) endOfStream(err error, finished, delivered bool) error {
	if errors.Is(err, io.EOF) && finished {
		return nil
	}
	msg := "stream ended before [DONE]"
	if !errors.Is(err, io.EOF) {
		msg += ": " + err.Error()
	}
	return &model.Error{Code: "stream_incomplete", Message: p.redact(msg), Retryable: !delivered}
}

// firstByte cancels an attempt whose response body has not started within
// the timeout.
type firstByte struct {
	timer    *time.Timer
	timedOut atomic.Bool
}

func startFirstByte(d time.Duration, cancel context.CancelFunc) *firstByte {
	fb := &firstByte{}
	if d > 0 {
		fb.timer = time.AfterFunc(d, func() { fb.timedOut.Store(true); cancel() })
	}
	return fb
}

func (fb *firstByte) stop() {
	if fb.timer != nil {
		fb.timer.Stop()
	}
}

func (fb *firstByte) fired() bool { return fb.timedOut.Load() }

// firstByteReader stops the first-byte timer when data arrives.
type firstByteReader struct {
	r    io.Reader
	fb   *firstByte
	seen bool
}

func (r *firstByteReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 && !r.seen {
		r.seen = true
		r.fb.stop()
	}
	return n, err
}
