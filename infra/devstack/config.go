package devstack

import (
	"errors"
	"fmt"
	"path/filepath"

	"go.uber.org/zap"
)

// PostgresConfig configures StartPostgres.
type PostgresConfig struct {
	// Dir is the data root. Required. The cluster lives in Dir/pgdata, the
	// server log in Dir/postgres.log, the unix socket in Dir. Created with its
	// parents when missing.
	Dir string
	// Port is the TCP port on 127.0.0.1. Default 0: pick a free port (and
	// retry with another one if it is taken before the server binds it).
	Port int
	// BinDir holds initdb and postgres. Default "": the newest
	// /usr/lib/postgresql/*/bin, else `pg_config --bindir`, else the directory
	// of postgres on $PATH.
	BinDir string
	// Logger receives lifecycle events. Default: zap.NewNop().
	Logger *zap.Logger
}

func (c *PostgresConfig) setDefaults() {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Dir != "" {
		if abs, err := filepath.Abs(c.Dir); err == nil {
			c.Dir = abs
		}
	}
}

// Validate reports every problem of the configuration at once.
func (c PostgresConfig) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("devstack: PostgresConfig.Dir is required"))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("devstack: PostgresConfig.Port %d out of range 0-65535", c.Port))
	}
	if c.BinDir != "" && !filepath.IsAbs(c.BinDir) {
		errs = append(errs, fmt.Errorf("devstack: PostgresConfig.BinDir %q must be absolute", c.BinDir))
	}
	return errors.Join(errs...)
}
