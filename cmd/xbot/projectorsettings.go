package main

import (
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/stack"
)

// projectorBatches sets the projectors' batch bounds and the audit
// projector's linger from the projector_* and clickhouse_projector_linger
// keys.
func (s *settings) projectorBatches(opts *stack.Options) error {
	var errs []error
	positive := func(name string) int {
		n, err := s.r.Int(name)
		switch {
		case err != nil:
			errs = append(errs, err)
		case n <= 0:
			errs = append(errs, fmt.Errorf("%s must be positive (got %d)", name, n))
		}
		return n
	}
	opts.ProjectorMaxBatch = positive("projector_max_batch")
	opts.ProjectorMaxBatchBytes = positive("projector_max_batch_bytes")
	linger, err := s.r.Duration("clickhouse_projector_linger")
	switch {
	case err != nil:
		errs = append(errs, err)
	case linger < 0 || linger > runner.MaxLinger:
		errs = append(errs, fmt.Errorf("clickhouse_projector_linger must be between 0s and %s (got %s)", runner.MaxLinger, linger))
	case linger == 0:
		opts.ClickHouseLinger = -1 // none
	default:
		opts.ClickHouseLinger = linger
	}
	return errors.Join(errs...)
}
