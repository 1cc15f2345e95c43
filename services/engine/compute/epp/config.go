package epp

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Config configures a provider whose sandboxes a plugin process keeps.
type Config struct {
	// ID is the provider's id; Name returns it and runs record it. Required.
	ID string
	// Dir is the plugin's installed directory: a Command[0] of "./x" is
	// resolved in it and may not leave it. Required.
	Dir string
	// Command is the plugin's argv, never a shell string: "./x" inside Dir,
	// or a program found on PATH (python3). Required.
	Command []string
	// DataDir is the plugin's own state directory and working directory,
	// created 0700. Required.
	DataDir string
	// Settings are the provider's settings by field name. They reach the
	// plugin only in initialize, never in its environment or argv.
	Settings map[string]string
	// Secrets are the Settings whose values are secret: the host removes
	// them from every text of the plugin it shows (errors, stderr, logs).
	Secrets []string
	// Features are the features the manifest declares (and the user
	// consented to); the host sends no request of another feature.
	Features []string
	// EnvPassthrough are names of host environment variables the plugin
	// also gets (the manifest's security.env_passthrough). XBOT_*, PG*,
	// CLICKHOUSE_* and OTEL_* are refused.
	EnvPassthrough []string
	// Withhold, when set, reports the host variables that hold secrets of
	// the host's own under names of their choosing (an agent's model key,
	// a profile's apiKeyEnv): the plugin never gets them, whatever its
	// passthrough says. It is asked at every start of a plugin process.
	Withhold func(name string) bool
	// StartupTimeout bounds a plugin's start up to its answer to initialize
	// (default 10 s); CallTimeout every other call (default 60 s), except
	// the run of a command, which its own timeout bounds.
	StartupTimeout, CallTimeout time.Duration
	// Verify runs before every start of a plugin process (the installed
	// tree's digest); its error refuses the start. Optional.
	Verify func() error
	// HostName and HostVersion are what initialize says of the host
	// (default "xbot", "dev").
	HostName, HostVersion string
	// Logger receives the plugin's log notifications and stderr (debug),
	// never its settings. Required.
	Logger *zap.Logger
	// Trace, when set, sees every message the host writes and reads,
	// whole. For tests: initialize's params hold the settings.
	Trace func(TraceEvent)
}

// TraceEvent is one line a session wrote (Sent) or read.
type TraceEvent struct {
	// Session tells the sessions (plugin processes) apart: request ids are
	// a session's own.
	Session int64
	Sent    bool
	Message json.RawMessage
}

// The seed's defaults: a plugin answers initialize within 10 s, and a call
// within 60 s.
const (
	defaultStartupTimeout = 10 * time.Second
	defaultCallTimeout    = 60 * time.Second
)

func (c *Config) setDefaults() {
	if c.StartupTimeout <= 0 {
		c.StartupTimeout = defaultStartupTimeout
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = defaultCallTimeout
	}
	if c.HostName == "" {
		c.HostName = "xbot"
	}
	if c.HostVersion == "" {
		c.HostVersion = "dev"
	}
}

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if c.ID == "" {
		errs = append(errs, errors.New("the ID is required"))
	}
	if c.Dir == "" || !filepath.IsAbs(c.Dir) {
		errs = append(errs, errors.New("the Dir is required and must be absolute"))
	}
	if c.DataDir == "" || !filepath.IsAbs(c.DataDir) {
		errs = append(errs, errors.New("the DataDir is required and must be absolute"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("the Logger is required"))
	}
	if _, err := c.program(); err != nil {
		errs = append(errs, err)
	}
	for _, name := range c.EnvPassthrough {
		if err := CheckPassthrough(name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("epp provider %s: %w", c.ID, err)
	}
	return nil
}

// CheckPassthrough refuses a variable a plugin may never receive from the
// host's environment: xbot's own (XBOT_*, where its secrets are), the
// databases' clients' (PG*, CLICKHOUSE_*) and the tracing exporter's
// (OTEL_*, whose headers carry tokens).
func CheckPassthrough(name string) error {
	upper := strings.ToUpper(name)
	for _, p := range []string{"XBOT_", "PG", "CLICKHOUSE_", "OTEL_"} {
		if strings.HasPrefix(upper, p) {
			return fmt.Errorf("environment variable %s may not be passed to a provider (%s*)", name, p)
		}
	}
	if name == "" || strings.ContainsAny(name, "=\x00") {
		return fmt.Errorf("environment variable name %q is malformed", name)
	}
	return nil
}

// CheckCommand refuses an argv that is empty, holds NUL bytes, or whose
// program is neither ./path staying inside the plugin's directory nor a
// bare name looked up on PATH.
func CheckCommand(argv []string) error {
	_, err := Config{Dir: "/plugin", Command: argv}.program()
	return err
}

// program is the path of Command[0]: inside Dir for "./x" (never outside,
// lexically), else the name to look up on PATH.
func (c Config) program() (string, error) {
	if len(c.Command) == 0 || c.Command[0] == "" || slices.ContainsFunc(c.Command, func(a string) bool {
		return strings.ContainsRune(a, 0)
	}) {
		return "", errors.New("the Command must be a non-empty argv without NUL bytes")
	}
	prog := c.Command[0]
	if !strings.HasPrefix(prog, "./") && !strings.HasPrefix(prog, "../") {
		if strings.ContainsRune(prog, '/') {
			return "", fmt.Errorf("command %q: give ./path inside the plugin or a program name on PATH", prog)
		}
		return prog, nil
	}
	p := filepath.Join(c.Dir, filepath.FromSlash(prog))
	if rel, err := filepath.Rel(c.Dir, p); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("command %q leaves the plugin's directory", prog)
	}
	return p, nil
}
