package imgateway

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// Endpoint is one sandbox bot: its id (the reply frames' bot and endpoint)
// and its owner, the default conversation id and the sender of its messages.
type Endpoint struct {
	ID    string
	Owner string
}

// DefaultEndpoint is the seed's default endpoint.
var DefaultEndpoint = Endpoint{ID: "sandbox-bot", Owner: "sandbox-user"}

// endpointIDPattern keeps endpoint ids usable in a URL path and a consumer group name.
var endpointIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Config configures a Gateway.
type Config struct {
	// Endpoints are the endpoints to mount, in order; default one, DefaultEndpoint.
	Endpoints []Endpoint
	// API is the client of the xbot API; the gateway sends each request
	// with the connecting client's token (client.WithToken). Required. A
	// client's frames are handled in order, so give it a negative
	// PendingTimeout: a message still pending after Wait is then not polled
	// for, and the next frame is not held up (the reply comes anyway).
	API *client.Client
	// Kafka names the cluster and the outbox topic. Required.
	Kafka kafka.Config
	// AgentID is the agent of a conversation's first run. Default "chat".
	AgentID string
	// ShellIsolation is what the ready frame reports of the sandbox
	// provider in use. Default: unavailable, provider "unknown".
	ShellIsolation wire.ShellIsolation
	// WorkingDirectory is the ready frame's workingDirectory.
	WorkingDirectory string
	// MediaDir is the only directory an outbound media segment's path may
	// name; empty drops every path segment.
	MediaDir string
	// Wait is how long a session message waits for its outcome. Default 5 s:
	// long enough to answer a duplicate or a rejection in the chat, short
	// enough not to hold the socket's reader.
	Wait time.Duration
	// Logger is required.
	Logger *zap.Logger
}

func (c *Config) setDefaults() {
	if len(c.Endpoints) == 0 {
		c.Endpoints = []Endpoint{DefaultEndpoint}
	}
	if c.AgentID == "" {
		c.AgentID = "chat"
	}
	if c.ShellIsolation.Provider == "" {
		c.ShellIsolation.Provider = "unknown"
	}
	if c.Wait == 0 {
		c.Wait = 5 * time.Second
	}
}

// Validate reports every problem of the config.
func (c Config) Validate() error {
	var errs []error
	if c.API == nil {
		errs = append(errs, errors.New("imgateway: API is required"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("imgateway: Logger is required"))
	}
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("imgateway: %w", err))
	}
	errs = append(errs, validateEndpoints(c.Endpoints)...)
	return errors.Join(errs...)
}

func validateEndpoints(eps []Endpoint) []error {
	var errs []error
	for _, ep := range eps {
		if !endpointIDPattern.MatchString(ep.ID) {
			errs = append(errs, fmt.Errorf("imgateway: endpoint id %q does not match %s", ep.ID, endpointIDPattern))
		}
		if ep.Owner == "" {
			errs = append(errs, fmt.Errorf("imgateway: endpoint %q has no owner", ep.ID))
		}
	}
	return errs
}

// mount is where an endpoint is served: its connection name (the id, with
// -2, -3 … added when an earlier endpoint has the same id) and its path
// (/sandbox for the first endpoint, /sandbox/<name> for the others).
type mount struct {
	Endpoint
	Name string
	Path string
}

// mounts returns the mount of each endpoint, in order.
func mounts(eps []Endpoint) []mount {
	// "history" is the first endpoint's history path (/sandbox/history).
	taken := map[string]bool{"history": true}
	out := make([]mount, len(eps))
	for i, ep := range eps {
		name := ep.ID
		for n := 2; taken[name]; n++ {
			name = fmt.Sprintf("%s-%d", ep.ID, n)
		}
		taken[name] = true
		path := "/sandbox/" + name
		if i == 0 {
			path = "/sandbox"
		}
		out[i] = mount{Endpoint: ep, Name: name, Path: path}
	}
	return out
}
