package epp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"
)

// session is one plugin process from initialize to shutdown.
type session struct {
	cfg      *Config
	conn     *conn
	features map[string]bool
	info     initResult
}

type initParams struct {
	Protocol string            `json:"protocol"`
	Host     hostInfo          `json:"host"`
	Config   map[string]string `json:"config"`
	DataDir  string            `json:"data_dir"`
}

type hostInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initResult struct {
	Protocol        string   `json:"protocol"`
	Name            string   `json:"name"`
	Version         string   `json:"version"`
	Features        []string `json:"features"`
	Isolation       string   `json:"isolation"`
	LimitsMechanism string   `json:"limits_mechanism"`
}

// openSession verifies the installed plugin, starts it and initializes it
// within the startup timeout. The session's features are the manifest's
// that the plugin's answer also lists (all of them when it lists none).
func openSession(ctx context.Context, cfg *Config) (*session, error) {
	if cfg.Verify != nil {
		if err := cfg.Verify(); err != nil {
			return nil, err
		}
	}
	prog, err := cfg.program()
	if err != nil {
		return nil, err
	}
	clean := newRedactor(secretValues(cfg))
	log := cfg.Logger.With(zap.String("provider", cfg.ID))
	proc, err := startProcess(cfg, prog, func(line string) {
		if ce := log.Check(zap.DebugLevel, "provider stderr"); ce != nil {
			ce.Write(zap.String("line", clean.clean(line)))
		}
	})
	if err != nil {
		return nil, err
	}
	s := &session{cfg: cfg, conn: newConn(cfg, proc, clean)}
	if err := s.initialize(ctx); err != nil {
		s.conn.proc.kill()
		return nil, fmt.Errorf("start provider %s: %w", cfg.ID, err)
	}
	s.features = map[string]bool{featCore: true}
	for _, f := range cfg.Features {
		if len(s.info.Features) == 0 || slices.Contains(s.info.Features, f) {
			s.features[f] = true
		}
	}
	return s, nil
}

// initialize makes the first request within the startup timeout and checks
// the protocol the plugin answers.
func (s *session) initialize(ctx context.Context) error {
	cfg := s.cfg
	ctx, cancel := context.WithTimeout(ctx, cfg.StartupTimeout)
	defer cancel()
	params := initParams{Protocol: Protocol, Host: hostInfo{Name: cfg.HostName, Version: cfg.HostVersion},
		Config: settings(cfg), DataDir: cfg.DataDir}
	err := s.conn.do(ctx, s.conn.nextID.Add(1), request{method: MInitialize, params: params, result: &s.info})
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no answer to initialize within %v: %w", cfg.StartupTimeout, ErrTimeout)
	case err != nil:
		return err
	case s.info.Protocol != Protocol:
		return fmt.Errorf("provider %s speaks %q; this host speaks %s: %w", cfg.ID, s.info.Protocol, Protocol, ErrProtocol)
	}
	return nil
}

func settings(cfg *Config) map[string]string {
	if cfg.Settings == nil {
		return map[string]string{}
	}
	return cfg.Settings
}

func secretValues(cfg *Config) []string {
	var out []string
	for _, name := range cfg.Secrets {
		out = append(out, cfg.Settings[name])
	}
	return out
}

// call makes a request of the table: refused without sending when the
// session lacks the method's feature, bounded by the call timeout (timeout
// > 0 overrides it; < 0: only ctx), retried where the table says so.
func (s *session) call(ctx context.Context, name string, params, result any, timeout time.Duration) error {
	m, ok := method(name)
	if !ok {
		panic("epp: no method " + name) // a wiring bug
	}
	if !s.features[m.Feature] {
		return &FeatureError{Provider: s.cfg.ID, Method: name, Feature: m.Feature}
	}
	switch {
	case timeout == 0:
		timeout = s.cfg.CallTimeout
	case timeout < 0:
		timeout = 0
	}
	return s.conn.retried(ctx, request{method: name, params: params, result: result, timeout: timeout})
}

// has reports whether the session offers feature.
func (s *session) has(feature string) bool { return s.features[feature] }

// shutdownTimeout bounds the shutdown request; the process's own end is
// bounded by stop's grace periods.
const shutdownTimeout = 3 * time.Second

// close ends the session: shutdown, then the process's stdin closes,
// SIGTERM and SIGKILL to its group as stop says.
func (s *session) close() {
	s.conn.markClosing()
	if s.conn.err() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		_ = s.conn.do(ctx, s.conn.nextID.Add(1), request{method: MShutdown})
		cancel()
	}
	s.conn.proc.stop()
}
