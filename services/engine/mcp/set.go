package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Set holds one execution's connections to its run's servers. A server is
// connected on first use, and again after its process ended (a crash
// fails the call that was running, not the run). Safe for concurrent use.
type Set struct {
	env     Env
	servers map[string]profile.MCPServer

	mu     sync.Mutex
	slots  map[string]*slot
	closed bool
}

// slot serialises connecting to one server.
type slot struct {
	mu   sync.Mutex
	conn *Conn
}

// NewSet returns an empty set for servers.
func NewSet(servers []profile.MCPServer, env Env) *Set {
	if env.Log == nil {
		panic("mcp.NewSet: Env.Log is required")
	}
	s := &Set{env: env, servers: map[string]profile.MCPServer{}, slots: map[string]*slot{}}
	for _, srv := range servers {
		s.servers[srv.Name] = srv
		s.slots[srv.Name] = &slot{}
	}
	return s
}

var errSetClosed = errors.New("the run's MCP connections are closed")

// Conn returns the connection to server name, connecting it (within the
// server's startTimeout and ctx) when there is none or its process ended.
func (s *Set) Conn(ctx context.Context, name string) (*Conn, error) {
	srv, ok := s.servers[name]
	if !ok {
		return nil, fmt.Errorf("no MCP server %q", name)
	}
	sl := s.slots[name]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.conn != nil && !sl.conn.Broken() {
		return sl.conn, nil
	}
	if sl.conn != nil {
		_ = sl.conn.Close()
		sl.conn = nil
	}
	cctx, cancel := context.WithTimeout(ctx, srv.StartTimeoutOrDefault())
	defer cancel()
	c, err := Connect(cctx, srv, s.env)
	if err != nil {
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("MCP server %s did not complete its handshake within %s: %w", name, srv.StartTimeoutOrDefault(), err)
		}
		return nil, fmt.Errorf("MCP server %s: %w", name, err)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		_ = c.Close()
		return nil, errSetClosed
	}
	sl.conn = c
	return c, nil
}

// Close closes every connection and stops every server process.
func (s *Set) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	var wg sync.WaitGroup
	for name, sl := range s.slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sl.mu.Lock()
			defer sl.mu.Unlock()
			if sl.conn == nil {
				return
			}
			if err := sl.conn.Close(); err != nil { // the server's answer may echo a secret
				s.env.Log.Debug("closing an MCP connection", zap.String("mcp_server", name),
					zap.String("error", s.Secrets().Scrub(err.Error())))
			}
			sl.conn = nil
		}()
	}
	wg.Wait()
}

// Secrets returns the secrets the set's connections use (for scrubbing).
func (s *Set) Secrets() *Secrets { return s.env.Secrets }
