package imgateway

import (
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/coder/websocket"
	"go.uber.org/zap"
)

// Close codes of the sandbox protocol.
const (
	// CloseReplaced closes a client a newer client of its endpoint replaced.
	CloseReplaced websocket.StatusCode = 4000
	// CloseStopping (1001, going away) closes every client when the gateway stops.
	CloseStopping = websocket.StatusGoingAway
	// CloseRetired (1012, service restart) closes the client of an endpoint
	// a configuration reload changed or removed; it reconnects.
	CloseRetired = websocket.StatusServiceRestart
)

// ErrClosed is returned by Reload after Close.
var ErrClosed = errors.New("imgateway: closed")

// Gateway serves the sandbox endpoints. It is an http.Handler: GET of an
// endpoint's path serves the chat page, a WebSocket upgrade of the same path
// connects a client.
type Gateway struct {
	cfg Config
	log *zap.Logger

	mu     sync.Mutex
	byPath map[string]*endpoint
	order  []*endpoint
	closed bool
	conns  sync.WaitGroup
}

// New returns a gateway serving cfg.Endpoints; each mounted path is logged.
func New(cfg Config) (*Gateway, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, log: cfg.Logger, byPath: map[string]*endpoint{}}
	// The history handler's config depends on cfg alone, not on the
	// endpoint: checked here once, mount cannot fail.
	if _, err := g.historyHandler(DefaultEndpoint.ID); err != nil {
		return nil, err
	}
	for _, m := range mounts(cfg.Endpoints) {
		g.mount(m)
	}
	return g, nil
}

func (g *Gateway) mount(m mount) {
	ep := newEndpoint(m)
	ep.history, _ = g.historyHandler(m.Name) // checked by New
	g.byPath[m.Path] = ep
	g.order = append(g.order, ep)
	g.log.Info("ws mounted "+m.Path, zap.String("endpoint", m.Name), zap.String("path", m.Path))
}

// Paths returns the mounted paths, in endpoint order.
func (g *Gateway) Paths() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]string, 0, len(g.order))
	for _, ep := range g.order {
		out = append(out, ep.Path)
	}
	return out
}

// Reload mounts eps in place of the current endpoints. An endpoint whose
// name, path and owner stay the same keeps its client; every other current
// endpoint's generation is retired and its client closed 1012.
func (g *Gateway) Reload(eps []Endpoint) error {
	if len(eps) == 0 {
		eps = []Endpoint{DefaultEndpoint}
	}
	if err := errors.Join(validateEndpoints(eps)...); err != nil {
		return err
	}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return ErrClosed
	}
	old := g.byPath
	g.byPath, g.order = map[string]*endpoint{}, nil
	for _, m := range mounts(eps) {
		if ep, ok := old[m.Path]; ok && ep.mount == m {
			delete(old, m.Path)
			g.byPath[m.Path], g.order = ep, append(g.order, ep)
			continue
		}
		g.mount(m)
	}
	g.mu.Unlock()
	for _, ep := range old {
		g.log.Info("ws retired "+ep.Path, zap.String("endpoint", ep.Name))
		ep.retire(CloseRetired, "endpoint generation retired")
	}
	return nil
}

// Close closes every client 1001 and waits for their connections to end.
// Later upgrades are refused.
func (g *Gateway) Close() {
	g.mu.Lock()
	g.closed = true
	eps := g.order
	g.mu.Unlock()
	for _, ep := range eps {
		ep.retire(CloseStopping, "sandbox endpoint stopped")
	}
	g.conns.Wait()
}

// ServeHTTP serves the chat page and the endpoints' sockets.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	ep, closed := g.byPath[r.URL.Path], g.closed
	var history *endpoint
	if base, ok := strings.CutSuffix(r.URL.Path, historySuffix); ok && ep == nil {
		history = g.byPath[base]
	}
	g.mu.Unlock()
	if history != nil && !closed {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
			return
		}
		history.history.ServeHTTP(w, r)
		return
	}
	g.mu.Lock()
	if ep, closed = g.byPath[r.URL.Path], g.closed; !closed && ep != nil {
		g.conns.Add(1)
	}
	g.mu.Unlock()
	switch {
	case ep == nil:
		http.NotFound(w, r)
	case closed:
		http.Error(w, "sandbox endpoint stopped", http.StatusServiceUnavailable)
	default:
		defer g.conns.Done()
		if !isUpgrade(r) {
			servePage(w, r)
			return
		}
		g.connect(w, r, ep)
	}
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return headerHas(r.Header.Get("Connection"), "upgrade") && headerHas(r.Header.Get("Upgrade"), "websocket")
}

// connect authenticates r, upgrades it and serves the connection until it ends.
func (g *Gateway) connect(w http.ResponseWriter, r *http.Request, ep *endpoint) {
	who, api, status := g.authenticate(r, ep)
	if status != 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		g.log.Info("websocket upgrade failed", zap.String("endpoint", ep.Name), zap.Error(err))
		return
	}
	c := newConn(g, ep, ws, who, api)
	c.serve(r.Context())
}
