package agentruntime

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// EngineKind is the engine_kind of this runtime client.
const EngineKind = "xbot"

// Config configures a Client: one conversation (platform session) of one
// agent, reached through one API client.
type Config struct {
	// API is the client of the xbot API, with the token of the principal the
	// conversation belongs to. Required.
	API *client.Client
	// SessionID is the conversation: the platform session's id. Required.
	SessionID string
	// AgentID is the agent of the session's first run, and whose
	// capabilities Capabilities reports. Required.
	AgentID string
	// Options are the per-run options of the runs a submit creates (nil:
	// the agent's defaults).
	Options *events.RunOptions
}

// Validate reports every problem of the config.
func (c Config) Validate() error {
	var errs []error
	if c.API == nil {
		errs = append(errs, errors.New("agentruntime: API is required"))
	}
	if c.SessionID == "" {
		errs = append(errs, errors.New("agentruntime: SessionID is required"))
	}
	if c.AgentID == "" {
		errs = append(errs, errors.New("agentruntime: AgentID is required"))
	}
	return errors.Join(errs...)
}

// Client is a live connection to one conversation, implementing the
// runtime client contract member by member over xbot's API. It is safe for
// concurrent use; the conversation lives on after Close.
type Client struct {
	cfg    Config
	life   context.Context
	stop   context.CancelFunc
	closed atomic.Bool
	// seen are the interactions Events saw open: their run and kind, so
	// Answer does not depend on the read model having caught up.
	mu   sync.Mutex
	seen map[string]seenInteraction
}

type seenInteraction struct{ runID, kind string }

// New connects to the conversation cfg names.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	life, stop := context.WithCancel(context.Background())
	return &Client{cfg: cfg, life: life, stop: stop, seen: map[string]seenInteraction{}}, nil
}

// EngineKind is the adapter's engine_kind: "xbot".
func (c *Client) EngineKind() string { return EngineKind }

// IsLive reports whether the connection is open: until Close.
func (c *Client) IsLive() bool { return !c.closed.Load() }

// SessionKey is the runtime's own id of the conversation (the contract's
// engine_session_key): the platform session's id. A new Client of the same
// id continues the same conversation.
func (c *Client) SessionKey() string { return c.cfg.SessionID }

// Close closes the connection: open Events iterators end. The conversation
// and its runs go on.
func (c *Client) Close() error {
	c.closed.Store(true)
	c.stop()
	return nil
}

// ErrClosed is returned by a member called after Close.
var ErrClosed = errors.New("agentruntime: the client is closed")

func (c *Client) live() error {
	if c.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Input is one user input of the conversation.
type Input struct {
	// ID is the input id: the message's Idempotency-Key. Required; the same
	// id again is the same input. Like any Idempotency-Key it is unique in
	// the tenant, not only in the conversation.
	ID string
	// Content is the user's message.
	Content string
}

// InputRefusedError says the runtime refused an input: Code is the stable
// code (schemas/v1/errors.json), Status the HTTP status of the refusal.
type InputRefusedError struct {
	Code    string
	Message string
	Status  int
}

func (e *InputRefusedError) Error() string {
	return fmt.Sprintf("agentruntime: input refused: %s (HTTP %d): %s", e.Code, e.Status, e.Message)
}

// Submit hands the input to the runtime (POST
// /v1/sessions/{platformSessionId}/messages, Idempotency-Key = in.ID) and
// returns once the runtime has it: its outcome is known or it is durably
// queued. It is idempotent by in.ID: submitting the same input again
// changes nothing. A refusal is an *InputRefusedError; a network error or
// an unavailable API is returned as it is (retry with the same input).
func (c *Client) Submit(ctx context.Context, in Input) error {
	if err := c.live(); err != nil {
		return err
	}
	if in.ID == "" {
		return &InputRefusedError{Code: string(events.CodeValidationFailed), Message: "the input has no id", Status: http.StatusUnprocessableEntity}
	}
	req := client.SessionMessageRequest{Content: in.Content, AgentID: c.cfg.AgentID, Options: c.cfg.Options}
	// An input id is an Idempotency-Key, unique in the whole tenant: the
	// runtime refuses one already used in another conversation
	// (idempotency_key_reused) rather than take it for that one's input.
	_, err := c.cfg.API.SendSessionMessage(ctx, c.cfg.SessionID, req, client.CommandOptions{IdempotencyKey: in.ID})
	return refusal(err)
}

// refusal is err as the contract reports it: a rejection or a 4xx answer
// is an *InputRefusedError, anything else (retryable) as it is.
func refusal(err error) error {
	var rej *client.RejectedError
	var p *client.Problem
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rej):
		return &InputRefusedError{Code: rej.Code, Message: rej.Detail, Status: rej.Status}
	case errors.As(err, &p) && p.Status >= 400 && p.Status < 500:
		return &InputRefusedError{Code: p.Code, Message: p.Detail, Status: p.Status}
	}
	return err
}

// Interrupt stops the reply in progress (POST
// /v1/sessions/{platformSessionId}/interrupt); cancelQueued also drops the
// inputs queued behind it (else they become the next reply). Without a
// reply in progress it does nothing.
func (c *Client) Interrupt(ctx context.Context, cancelQueued bool) error {
	if err := c.live(); err != nil {
		return err
	}
	_, err := c.cfg.API.InterruptSession(ctx, c.cfg.SessionID, client.InterruptRequest{CancelQueued: cancelQueued}, client.CommandOptions{})
	if errors.Is(err, client.ErrNotFound) {
		return nil // no run yet: nothing to interrupt
	}
	return err
}

// Committed tells the runtime the platform has stored every event up to
// cursor. xbot keeps the conversation's log for good, so nothing is
// released; a cursor of another conversation is ErrCursorExpired.
func (c *Client) Committed(_ context.Context, cursor Cursor) error {
	if err := c.live(); err != nil {
		return err
	}
	_, err := c.parse(cursor)
	return err
}

// Manifest is the capability manifest of the connected runtime (the
// contract's EngineCapabilityManifest), as GET /v1/agents/{agentId}
// declares it.
type Manifest struct {
	AgentID           string   `json:"agentId"`
	PermissionModes   []string `json:"permissionModes"`
	InputContentTypes []string `json:"inputContentTypes"`
	ControlOperations []string `json:"controlOperations"`
	Tools             []string `json:"tools"`
}

// Capabilities reads the agent's manifest (GET /v1/agents/{agentId}).
func (c *Client) Capabilities(ctx context.Context) (Manifest, error) {
	if err := c.live(); err != nil {
		return Manifest{}, err
	}
	a, err := c.cfg.API.GetAgent(ctx, c.cfg.AgentID)
	if err != nil {
		return Manifest{}, fmt.Errorf("agentruntime: capabilities of %s: %w", c.cfg.AgentID, err)
	}
	m := Manifest{AgentID: a.AgentID, PermissionModes: a.PermissionModes, InputContentTypes: a.InputContentTypes,
		ControlOperations: a.ControlOperations, Tools: []string{}}
	for _, t := range a.Tools {
		m.Tools = append(m.Tools, t.Name)
	}
	return m, nil
}
