package stack

import (
	"context"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/infra/metrics"
)

// startMetrics opens the /metrics endpoint first, so that a taken address
// stops the process before it joins any group.
func (s *Stack) startMetrics() error {
	if s.opts.MetricsAddr == "" {
		return nil
	}
	srv, err := metrics.Listen(s.opts.MetricsAddr)
	if err != nil {
		return err
	}
	s.metrics = srv
	s.log.Info("metrics endpoint listening", zap.String("addr", "http://"+srv.Addr()+metrics.Path))
	return nil
}

// MetricsAddr returns the /metrics endpoint's address (host:port), "" when
// it serves none.
func (s *Stack) MetricsAddr() string {
	if s.metrics == nil {
		return ""
	}
	return s.metrics.Addr()
}

func (s *Stack) stopMetrics(ctx context.Context) {
	if s.metrics == nil {
		return
	}
	if err := s.metrics.Close(ctx); err != nil {
		s.log.Warn("metrics endpoint stopped with an error", zap.Error(err))
	}
}
