package api

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"golang.org/x/net/netutil"

	"github.com/xbot-runtime/xbot/events"
)

// Defaults of Limits.
const (
	// DefaultReadHeaderTimeout is how long a client may take to send its
	// request headers: generous for a slow mobile link, short enough that
	// a slowloris client cannot pin a connection.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyReadTimeout is how long a client may take to send a
	// request body once its headers are in: huma's default, ample for the
	// few KiB a command carries.
	DefaultBodyReadTimeout = 5 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection with no request for
	// this long; 60 s matches common load balancers' idle timeout.
	DefaultIdleTimeout = 60 * time.Second
	// DefaultMaxHeaderBytes is 64 KiB: a bearer JWT and the usual headers
	// fit many times over.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxConns caps open connections per instance; each costs a
	// goroutine and buffers, and idle ones count until IdleTimeout.
	DefaultMaxConns = 4096
	// DefaultMaxStreams caps open SSE streams per instance.
	DefaultMaxStreams = 2048
	// DefaultMaxStreamsPerPrincipal caps one principal's open streams: a
	// few browser tabs, each with a run and a session stream.
	DefaultMaxStreamsPerPrincipal = 32
	// DefaultWriteTimeout bounds a write request until its command is sent:
	// long enough to ride out a Kafka leader election or a database
	// failover, short enough that a dependency gone for good frees the
	// request's slot and tells its client.
	DefaultWriteTimeout = 30 * time.Second
	// The default of MaxWrites is four per processor (defaultMaxWrites).
	// streamRetryAfter is the Retry-After of a refused stream, in seconds:
	// about the time a client needs to close a stream it no longer reads.
	streamRetryAfter = 5
)

// Limits bound connections and streams. Zero values take the defaults.
type Limits struct {
	// ReadHeaderTimeout: default DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds reading a request body; the handler's own work
	// is not bounded by it. Default DefaultBodyReadTimeout.
	BodyReadTimeout time.Duration
	// IdleTimeout: default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxHeaderBytes: larger request headers get 431. Default
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxConns caps concurrently open connections; further ones wait in the
	// listen backlog until one closes. Default DefaultMaxConns.
	MaxConns int
	// MaxStreams caps open streams of the instance; further ones get 429
	// too_many_streams. Default DefaultMaxStreams.
	MaxStreams int
	// MaxStreamsPerPrincipal caps the open streams of one principal (tenant
	// and actor); further ones get 429 too_many_streams. Default
	// DefaultMaxStreamsPerPrincipal.
	MaxStreamsPerPrincipal int
	// MaxWrites caps the write requests (commands) the instance prepares
	// at once, from their handler's start until their command is sent or
	// handed to a client that delivers it elsewhere (CommandQueued);
	// further ones wait their turn (intake). Default four per processor.
	MaxWrites int
	// WriteTimeout bounds a write request from its start until its command
	// is sent: its wait for a slot, its claims in the database and the
	// command's produce. Past it the answer is 503 unavailable with
	// Retry-After, and the command may still be queued (the client retries
	// with the same Idempotency-Key). The wait for the command's outcome
	// (?wait) is not part of it. Default DefaultWriteTimeout.
	WriteTimeout time.Duration
}

func (l *Limits) setDefaults() {
	setDefault(&l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	setDefault(&l.BodyReadTimeout, DefaultBodyReadTimeout)
	setDefault(&l.IdleTimeout, DefaultIdleTimeout)
	setDefault(&l.MaxHeaderBytes, DefaultMaxHeaderBytes)
	setDefault(&l.MaxConns, DefaultMaxConns)
	setDefault(&l.MaxStreams, DefaultMaxStreams)
	setDefault(&l.MaxStreamsPerPrincipal, DefaultMaxStreamsPerPrincipal)
	setDefault(&l.MaxWrites, defaultMaxWrites())
	setDefault(&l.WriteTimeout, DefaultWriteTimeout)
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

func (l Limits) validate() error {
	if l.ReadHeaderTimeout < 0 || l.BodyReadTimeout < 0 || l.IdleTimeout < 0 || l.MaxHeaderBytes < 0 || l.MaxConns < 0 ||
		l.MaxStreams < 0 || l.MaxStreamsPerPrincipal < 0 || l.MaxWrites < 0 || l.WriteTimeout < 0 {
		return fmt.Errorf("api: Limits must not be negative (%+v)", l)
	}
	if l.MaxStreamsPerPrincipal > l.MaxStreams {
		return fmt.Errorf("api: Limits.MaxStreamsPerPrincipal (%d) exceeds MaxStreams (%d)", l.MaxStreamsPerPrincipal, l.MaxStreams)
	}
	return nil
}

// Server returns an http.Server serving Handler with the configured
// timeouts and header cap, and ln capped at Limits.MaxConns open
// connections. Serve the one with the other. There is no write timeout:
// streams stay open for as long as their runs.
func (a *API) Server(ln net.Listener) (*http.Server, net.Listener) {
	l := a.cfg.Limits
	srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout: l.IdleTimeout, MaxHeaderBytes: l.MaxHeaderBytes}
	return srv, netutil.LimitListener(ln, l.MaxConns)
}

// streamSlots counts open streams, in total and per principal.
type streamSlots struct {
	mu     sync.Mutex
	total  int
	per    map[string]int
	max    int
	maxPer int
}

// errTooManyStreams is the error of acquire.
var errTooManyStreams = errors.New("too many open streams")

// acquire takes a slot for principal p, or fails when p or the instance
// holds as many as allowed. Call the release function exactly once.
func (s *streamSlots) acquire(p Principal) (func(), error) {
	key := p.Tenant + "/" + p.Actor
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total >= s.max || s.per[key] >= s.maxPer {
		return nil, errTooManyStreams
	}
	if s.per == nil {
		s.per = make(map[string]int)
	}
	s.total++
	s.per[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.total--
			if s.per[key]--; s.per[key] == 0 {
				delete(s.per, key)
			}
		})
	}, nil
}

// tooManyStreams is the 429 of a refused stream.
func tooManyStreams() error {
	p := newProblem(http.StatusTooManyRequests, events.CodeTooManyStreams,
		"too many open streams for this token or this instance; close one or retry later")
	return huma.ErrorWithHeaders(p, http.Header{"Retry-After": {strconv.Itoa(streamRetryAfter)}})
}
