package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Env is what connecting a run's servers needs.
type Env struct {
	// Sandbox returns the run's sandbox, where a stdio server runs.
	// Required for stdio servers.
	Sandbox func(ctx context.Context) (compute.Sandbox, error)
	// Secrets fill remote servers' header templates.
	Secrets *Secrets
	// Log receives what a server logs on stderr (bounded) and connection
	// events. Required.
	Log *zap.Logger
	// ClientVersion is reported to servers as the client's version.
	ClientVersion string
}

// clientName is how the runtime introduces itself to servers.
const clientName = "xbot"

// Conn is one connection to one MCP server, for one execution of a run.
// Safe for concurrent use.
type Conn struct {
	server  profile.MCPServer
	session *sdk.ClientSession
	// stop ends the connection's process or HTTP session; idempotent.
	stop func()
	// proc is the stdio server's process (nil for a remote server).
	proc *process

	tokens   atomic.Int64
	progress sync.Map // progress token (string) → *progressSink
	// broken is set when a request failed without the server's answer:
	// the connection is not used again.
	broken atomic.Bool
}

// Errors.
var (
	// ErrServerStopped means the server's process ended or the connection
	// broke; the call's outcome is unknown.
	ErrServerStopped = errors.New("the MCP server stopped")
)

// Connect starts (stdio) or reaches (remote) srv and completes the MCP
// handshake, within ctx. The connection lives until Close, not until ctx
// ends (a transport's streams are tied to the context it connects with).
func Connect(ctx context.Context, srv profile.MCPServer, env Env) (*Conn, error) {
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	detach := context.AfterFunc(ctx, end) // ctx bounds the handshake only
	c, err := connect(ctx, life, srv, env)
	if !detach() || err != nil {
		end()
		if c != nil {
			_ = c.Close()
		}
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	stop := c.stop
	c.stop = func() { stop(); end() }
	return c, nil
}

func connect(ctx, life context.Context, srv profile.MCPServer, env Env) (*Conn, error) {
	c := &Conn{server: srv, stop: func() {}}
	client := sdk.NewClient(&sdk.Implementation{Name: clientName, Version: env.ClientVersion}, &sdk.ClientOptions{
		// No roots, sampling or elicitation: a server gets nothing from the
		// run but its tool calls' arguments.
		Capabilities:                &sdk.ClientCapabilities{},
		ProgressNotificationHandler: c.onProgress,
	})
	var transport sdk.Transport
	switch srv.TransportOrDefault() {
	case profile.TransportStdio:
		if env.Sandbox == nil {
			return nil, errors.New("a stdio MCP server needs the run's sandbox")
		}
		sb, err := env.Sandbox(ctx)
		if err != nil {
			return nil, fmt.Errorf("the sandbox is unavailable: %w", err)
		}
		c.proc = startProcess(srv, sb, env.Log)
		transport, c.stop = c.proc.transport(), c.proc.kill
	default:
		t, err := remoteTransport(srv, env.Secrets)
		if err != nil {
			return nil, err
		}
		transport, c.stop = t, func() {}
	}
	session, err := client.Connect(life, transport, nil)
	if err != nil {
		c.stop()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return nil, c.explain(err)
	}
	c.session = session
	return c, nil
}

// Info returns what the server said of itself in the handshake.
func (c *Conn) Info() (name, version, protocol string) {
	r := c.session.InitializeResult()
	if r == nil {
		return "", "", ""
	}
	if r.ServerInfo != nil {
		name, version = r.ServerInfo.Name, r.ServerInfo.Version
	}
	return name, version, r.ProtocolVersion
}

// maxListPages bounds the pages of one tools/list: a server that keeps
// answering with a cursor is broken.
const maxListPages = 64

// ListTools lists every tool of the server, following its cursors.
func (c *Conn) ListTools(ctx context.Context) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	params := &sdk.ListToolsParams{}
	for range maxListPages {
		res, err := c.session.ListTools(ctx, params)
		if err != nil {
			c.noteFailure(ctx, err)
			return nil, c.explain(err)
		}
		out = append(out, res.Tools...)
		if res.NextCursor == "" {
			return out, nil
		}
		params.Cursor = res.NextCursor
	}
	return nil, fmt.Errorf("tools/list returned more than %d pages", maxListPages)
}

// Call calls tool (its name on the server) with args, a JSON object.
// progress, if not nil, receives the server's progress notifications as
// text, one at a time, and never once Call has returned (the SDK handles
// notifications apart from answers: one sent before the answer may be
// handled after it). When ctx ends, the request is cancelled with MCP's
// cancellation notification and ctx's error is returned.
func (c *Conn) Call(ctx context.Context, tool string, args json.RawMessage, progress func(string)) (*sdk.CallToolResult, error) {
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	if progress != nil {
		token := "xbot-" + strconv.FormatInt(c.tokens.Add(1), 10)
		params.SetProgressToken(token)
		sink := &progressSink{f: progress}
		c.progress.Store(token, sink)
		defer func() { c.progress.Delete(token); sink.end() }()
	}
	res, err := c.session.CallTool(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.noteFailure(ctx, err)
		return nil, c.explain(err)
	}
	return res, nil
}

// Broken reports whether the connection can no longer carry calls: the
// server's process ended, or a request failed without the server's answer
// (the connection broke, an answer was too large, a session was lost).
func (c *Conn) Broken() bool { return c.broken.Load() || c.proc != nil && c.proc.ended() }

// noteFailure marks the connection broken when err, a request's error while
// ctx was live, is not the server's JSON-RPC error answer.
func (c *Conn) noteFailure(ctx context.Context, err error) {
	var answer *jsonrpc.Error
	if ctx.Err() == nil && !errors.As(err, &answer) {
		c.broken.Store(true)
	}
}

// closeWait bounds ending a session: a remote server that does not answer
// its session's DELETE does not hold the run.
const closeWait = 5 * time.Second

// Close stops the server's process (stdio) and ends the session.
func (c *Conn) Close() error {
	c.stop()
	if c.session == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- c.session.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(closeWait):
		return fmt.Errorf("closing the session of MCP server %s took longer than %s", c.server.Name, closeWait)
	}
}

func (c *Conn) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	sink, ok := c.progress.Load(fmt.Sprint(p.ProgressToken))
	if !ok {
		return
	}
	text := fmt.Sprintf("progress %g", p.Progress)
	if p.Total > 0 {
		text += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		text += ": " + p.Message
	}
	sink.(*progressSink).send(text + "\n")
}

// progressSink hands one call's progress to its function until the call
// ends; end waits for a delivery under way.
type progressSink struct {
	mu    sync.Mutex
	f     func(string)
	ended bool
}

func (s *progressSink) send(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended {
		s.f(text)
	}
}

func (s *progressSink) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
}

// explain adds what the server's process left (its exit and the end of its
// stderr) to an error of a stdio connection that broke.
func (c *Conn) explain(err error) error {
	if c.proc == nil || !c.proc.ended() && !connectionLost(err) {
		return err
	}
	why := c.proc.why()
	if why == "" {
		return err
	}
	if cause := c.proc.failure(); cause != nil {
		err = errors.Join(err, cause) // a lost sandbox stays visible (compute.ErrSandboxLost)
	}
	return fmt.Errorf("%w (%s): %w", ErrServerStopped, why, err)
}

// connectionLost reports whether err says the connection itself broke, as
// opposed to the server answering with an error.
func connectionLost(err error) bool {
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}
