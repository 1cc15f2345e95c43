package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// CommandOptions are what every command endpoint takes besides its body.
type CommandOptions struct {
	// IdempotencyKey names the command (header Idempotency-Key): the same
	// request again under the same key is answered duplicate with the first
	// attempt's outcome and changes nothing. Empty: the client generates a
	// key for the call, sends every retry of the call under it, and returns
	// it in the result (CommandResult.IdempotencyKey, set also when the call
	// returns an error), so the caller can repeat the command safely later
	// too.
	IdempotencyKey string
	// Wait is how long the server waits for the outcome (?wait=): nil leaves
	// the server's default. When the answer is still pending, the client
	// polls GET /v1/commands/{commandId} for the outcome, up to
	// Config.PendingTimeout; a Wait of 0 asks for the first answer as it is
	// (usually pending) and does not poll.
	Wait *time.Duration
}

// WaitFor returns a pointer to d, for CommandOptions.Wait.
func WaitFor(d time.Duration) *time.Duration { return &d }

// key is the command's Idempotency-Key: the caller's, or a fresh one.
func (o CommandOptions) key() string {
	if o.IdempotencyKey != "" {
		return o.IdempotencyKey
	}
	return NewIdempotencyKey()
}

// polls reports whether a pending answer is followed up by polling.
func (o CommandOptions) polls() bool { return o.Wait == nil || *o.Wait > 0 }

// path is path with the ?wait= the options ask for.
func (o CommandOptions) path(path string) string {
	if o.Wait != nil {
		path += "?wait=" + url.QueryEscape(o.Wait.String())
	}
	return path
}

// NewIdempotencyKey returns a fresh random Idempotency-Key ("key-" and 32
// hex digits), for a caller that wants to choose the key of a command before
// sending it (to send it again later, or to use it as a message's input id).
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "key-" + hex.EncodeToString(b[:])
}

// command sends a command (POST path with body), follows a pending outcome
// up, and returns the answer with a *RejectedError when the command was
// rejected.
func (c *Client) command(ctx context.Context, path string, body any, opts CommandOptions) (CommandResult, error) {
	key := opts.key()
	var res CommandResult
	err := c.call(ctx, http.MethodPost, opts.path(path), body, &res, "Idempotency-Key", key)
	// The key goes back with an error too: after a network error or an
	// unavailable API the command may have landed, and only a repeat under
	// the same key is safe.
	res.IdempotencyKey = key
	if err != nil {
		return res, err
	}
	if res.Outcome == OutcomePending && opts.polls() {
		var err error
		if res, err = c.awaitOutcome(ctx, res); err != nil {
			return res, err
		}
	}
	return res, rejection(res)
}

// The polling of a pending outcome: the first read soon (the executor
// usually decides within milliseconds of the server's wait running out),
// later ones at most every second.
const (
	pendingPollFirst = 50 * time.Millisecond
	pendingPollMax   = time.Second
)

// awaitOutcome polls the command of res until its outcome is known and
// returns res updated with it. When Config.PendingTimeout passes first, res
// is returned as it is (pending, nil error: the command is durably queued,
// its outcome not known yet); when ctx ends, res and ctx's error.
func (c *Client) awaitOutcome(ctx context.Context, res CommandResult) (CommandResult, error) {
	if c.cfg.PendingTimeout < 0 || res.CommandID == "" {
		return res, nil
	}
	pctx, cancel := context.WithTimeout(ctx, c.cfg.PendingTimeout)
	defer cancel()
	for delay := pendingPollFirst; ; delay = min(2*delay, pendingPollMax) {
		if err := sleep(pctx, delay); err != nil {
			return res, pendingEnded(ctx, res)
		}
		cmd, err := c.GetCommand(pctx, res.CommandID)
		switch {
		case err == nil && cmd.Outcome != OutcomePending:
			return res.with(cmd), nil
		case err == nil, errors.Is(err, ErrCommandNotFound), pctx.Err() != nil:
			// not decided yet, not in the read model yet, or out of time
		default:
			return res, fmt.Errorf("outcome of command %s: %w", res.CommandID, err)
		}
	}
}

// pendingEnded is what awaitOutcome returns when its wait ends: ctx's
// error when the caller's context ended, nil when only PendingTimeout did.
func pendingEnded(ctx context.Context, res CommandResult) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("outcome of command %s still pending: %w", res.CommandID, err)
	}
	return nil
}

// with is res updated with the outcome the commands read model recorded.
func (res CommandResult) with(cmd Command) CommandResult {
	res.Outcome, res.Code, res.Detail = cmd.Outcome, cmd.Code, cmd.Message
	res.OriginalCommandID, res.OriginalOutcome, res.OriginalCode = cmd.OriginalCommandID, cmd.OriginalOutcome, cmd.OriginalCode
	if cmd.RunID != "" {
		res.RunID = cmd.RunID
	}
	if cmd.CreatedRunID != "" {
		res.CreatedRunID = cmd.CreatedRunID
	}
	return res
}

// CreateRun queues a CreateRun command (POST /v1/runs).
func (c *Client) CreateRun(ctx context.Context, req CreateRunRequest, opts CommandOptions) (CommandResult, error) {
	return c.command(ctx, "/v1/runs", req, opts)
}

// CancelRun queues a CancelRun command (POST /v1/runs/{runId}/cancel).
func (c *Client) CancelRun(ctx context.Context, runID, reason string, opts CommandOptions) (CommandResult, error) {
	return c.command(ctx, "/v1/runs/"+url.PathEscape(runID)+"/cancel", reasonBody(reason), opts)
}

// reasonBody is the body of a command that takes only a reason: none when
// reason is empty, so the server's default applies.
func reasonBody(reason string) any {
	if reason == "" {
		return nil
	}
	return struct {
		Reason string `json:"reason"`
	}{reason}
}

// AppendInput queues an AppendUserInput command (POST
// /v1/runs/{runId}/inputs).
func (c *Client) AppendInput(ctx context.Context, runID string, req AppendInputRequest, opts CommandOptions) (CommandResult, error) {
	return c.command(ctx, "/v1/runs/"+url.PathEscape(runID)+"/inputs", req, opts)
}
