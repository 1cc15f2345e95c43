package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Path is where the endpoint serves the metrics.
const Path = "/metrics"

// readHeaderTimeout bounds a scraper's request headers: a scraper sends a
// few hundred bytes at once; a client that does not is holding a connection.
const readHeaderTimeout = 5 * time.Second

// ErrAddrInUse is the error of Listen when another process listens on the
// address already.
var ErrAddrInUse = errors.New("address already in use")

// Handler serves Registry in the Prometheus text format (or OpenMetrics,
// when the scraper asks for it).
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Server is a running metrics endpoint.
type Server struct {
	srv  *http.Server
	addr string
	done chan error
}

// Listen serves Registry on addr (host:port; port 0 picks a free one) at
// Path, on a listener of its own, until Close. It fails at once when addr
// cannot be listened on; when another process holds it the error wraps
// ErrAddrInUse.
func Listen(addr string) (*Server, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("metrics: listen on %s: %w (another process serves there: set metrics_addr to another address, or to off)",
			addr, ErrAddrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, Handler())
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}, addr: ln.Addr().String(),
		done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the endpoint listens on.
func (s *Server) Addr() string { return s.addr }

// Close stops the endpoint, letting scrapes in flight finish until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serveErr := <-s.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
