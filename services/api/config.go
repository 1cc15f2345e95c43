package api

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Defaults of Config.
const (
	// DefaultWait is how long a command endpoint waits for the outcome when the
	// request has no ?wait=: long enough for an executor on the same network to
	// admit a command, short enough for an interactive client.
	DefaultWait = 2 * time.Second
	// DefaultWaitMax caps ?wait= so a request never outlives typical proxy
	// idle timeouts (60 s) with margin.
	DefaultWaitMax = 30 * time.Second
	// DefaultMaxBodyBytes is 1 MiB: a command's content is at most 256 KiB
	// (commands.MaxContentBytes), so this leaves room for JSON escaping.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxEventPageBytes bounds the envelopes of one events page
	// (postgres.DefaultEventPageBytes, 1 MiB).
	DefaultMaxEventPageBytes = 1 << 20
	// DefaultPartitions is the partition count infra/kafka.Config creates
	// topics with by default.
	DefaultPartitions = 12
	// DefaultStreamAppearWait bounds how long a stream waits for a run or
	// session the read model does not hold: the API answers a create before
	// the read model has its run (at once with ?wait=0), and a client opening
	// the stream next must not be told it does not exist. The event log shows
	// the run within milliseconds; 2 s leaves room for a busy executor and is
	// still a prompt 404 for a mistaken id.
	DefaultStreamAppearWait = 2 * time.Second
	// DefaultRememberFinished is the executor's default of
	// executor_remember_finished (executor.DefaultRememberFinished), 7 days.
	DefaultRememberFinished = 7 * 24 * time.Hour
)

// tenantPattern is the rule commands.Envelope.Validate applies to tenantId.
var tenantPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Config configures the API.
type Config struct {
	// Tokens maps a bearer token to the principal it speaks for, in the form
	// ParsePrincipal reads: "tenant", "tenant/actor" or
	// "tenant/actor/scope+scope". Required, at least one entry, unless JWT
	// is on.
	Tokens map[string]string
	// JWT optionally accepts signed JSON Web Tokens as well.
	JWT JWTConfig
	// Limits bound what one client, and all of them, may hold open.
	Limits Limits
	// PublicURL is the external base URL (scheme://host[:port]) the schema
	// links of answers (the Link header, rel="describedBy") start with.
	// Optional; empty makes them relative (/schemas/…). Request headers
	// (Host, X-Forwarded-Host) never are.
	PublicURL string
	// WaitDefault is how long command endpoints wait for the outcome when the
	// request has no ?wait=. Default DefaultWait; must not exceed WaitMax.
	WaitDefault time.Duration
	// WaitMax caps ?wait=. Default DefaultWaitMax. Keep it below the HTTP
	// server's WriteTimeout.
	WaitMax time.Duration
	// MaxBodyBytes bounds a request body; larger bodies get 413
	// payload_too_large. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxEventPageBytes bounds the envelope bytes of one page of
	// GET /v1/runs/{runId}/events: the page ends early (nextAfterSeq goes
	// on from it), and a single larger event is returned alone. Default
	// DefaultMaxEventPageBytes.
	MaxEventPageBytes int
	// Version is the API version shown in the OpenAPI document. Default "dev".
	Version string
	// Partitions is the partition count of the commands topic that places a
	// created run on its sandbox key's partition (commands.RunIDFor) while
	// CommandPartitions has not answered: set it to kafka.Config.Partitions,
	// the count xbot creates its topics with. Default DefaultPartitions.
	Partitions int
	// CommandPartitions reads the partition count of the commands topic
	// (kafka.PartitionCount). Optional; its first answer is kept for the
	// life of the API, and until it answers (e.g. the topic does not exist
	// yet) Partitions is used. A wrong count places runs on the wrong
	// partition, and the executor rejects them (sandbox_key_misrouted).
	CommandPartitions func(ctx context.Context) (int, error)
	// RememberFinished is how long the executor remembers a finished run
	// (executor.Config.RememberFinished, executor_remember_finished); set it
	// to the executors' value. A create that repeats the key and body of a
	// run that ended longer ago than half of it is answered from the read
	// model and not sent: the executor may have forgotten the run, and would
	// accept the create as a new run whose log starts at seq 1 again. The
	// other half is the margin for clocks of different hosts. Default
	// DefaultRememberFinished; at least 1m, like the executor's.
	RememberFinished time.Duration
	// StreamAppearWait is how long a stream of a run or session the read
	// model does not hold waits for the event log to show it before it
	// answers 404. Every such 404 waits it out, so that another tenant's run
	// looks exactly like a missing one. Default DefaultStreamAppearWait.
	StreamAppearWait time.Duration
	// Agents looks up an agent's profile, whose runOptions and sandbox bound
	// the per-run options a request may ask for (403 option_not_allowed).
	// Optional: without it options are checked for their shape and scopes
	// only here, and against the profile by the executor when the run
	// starts (a run whose options the profile refuses fails).
	Agents func(agentID string) (profile.Profile, bool)
	// CORS lets browser pages of other origins call the API (cors.go).
	// Default off.
	CORS CORSConfig
}

func (c *Config) setDefaults() {
	if c.WaitDefault == 0 {
		c.WaitDefault = DefaultWait
	}
	if c.WaitMax == 0 {
		c.WaitMax = DefaultWaitMax
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxEventPageBytes == 0 {
		c.MaxEventPageBytes = DefaultMaxEventPageBytes
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Partitions == 0 {
		c.Partitions = DefaultPartitions
	}
	if c.RememberFinished == 0 {
		c.RememberFinished = DefaultRememberFinished
	}
	if c.StreamAppearWait == 0 {
		c.StreamAppearWait = DefaultStreamAppearWait
	}
	c.Limits.setDefaults()
	c.CORS.setDefaults()
}

// Validate reports every problem of the configuration (after defaults).
// Messages never contain a token.
func (c Config) Validate() error {
	var errs []error
	if len(c.Tokens) == 0 && !c.JWT.enabled() {
		errs = append(errs, errors.New("api: Tokens is required (bearer token → principal) unless JWT is on"))
	}
	for tok, spec := range c.Tokens {
		if tok == "" {
			errs = append(errs, fmt.Errorf("api: principal %q has an empty token", spec))
		}
		if _, err := ParsePrincipal(spec); err != nil {
			errs = append(errs, fmt.Errorf("api: principal %q: %w", spec, err))
		}
	}
	errs = append(errs, c.JWT.validate(), c.Limits.validate(), validPublicURL(c.PublicURL), c.CORS.validate())
	if c.WaitMax <= 0 {
		errs = append(errs, fmt.Errorf("api: WaitMax must be positive (got %s)", c.WaitMax))
	}
	if c.WaitDefault < 0 || c.WaitDefault > c.WaitMax {
		errs = append(errs, fmt.Errorf("api: WaitDefault must be within 0..WaitMax (got %s, max %s)", c.WaitDefault, c.WaitMax))
	}
	if c.MaxBodyBytes <= 0 {
		errs = append(errs, fmt.Errorf("api: MaxBodyBytes must be positive (got %d)", c.MaxBodyBytes))
	}
	if c.Partitions < 1 {
		errs = append(errs, fmt.Errorf("api: Partitions must be >= 1 (got %d)", c.Partitions))
	}
	if c.MaxEventPageBytes < 1 {
		errs = append(errs, fmt.Errorf("api: MaxEventPageBytes must be positive (got %d)", c.MaxEventPageBytes))
	}
	if c.StreamAppearWait < 0 {
		errs = append(errs, fmt.Errorf("api: StreamAppearWait must not be negative (got %s)", c.StreamAppearWait))
	}
	if c.RememberFinished < time.Minute {
		errs = append(errs, fmt.Errorf("api: RememberFinished must be at least 1m (got %s)", c.RememberFinished))
	}
	return errors.Join(errs...)
}
