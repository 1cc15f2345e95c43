package clickhouse

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// Config says where ClickHouse is and how to talk to it.
type Config struct {
	// Addr is the native-protocol address, host:port (port 9000 on a
	// default server). Required. The HTTP port does not work: the driver's
	// HTTP protocol is not understood by ClickHouse 18.16.
	Addr string
	// Database is used for unqualified table names. Default "default".
	Database string
	// User defaults to "default"; Password to "" (none).
	User     string
	Password string
	// DialTimeout bounds opening a connection. Default 10 s.
	DialTimeout time.Duration
	// ReadTimeout bounds every read from the server, so a query the server
	// never answers fails instead of hanging. Default 60 s: long enough for a
	// FINAL over a large audit table, short enough to notice a dead server.
	ReadTimeout time.Duration
	// QueryTimeout is the deadline given to calls of this package whose
	// context has none. Default 60 s, for the same reason as ReadTimeout.
	QueryTimeout time.Duration
	// MaxOpenConns caps the connection pool. Default 10: a projector inserts
	// from one goroutine; queries from tests and tools share the rest.
	MaxOpenConns int
}

func (c *Config) setDefaults() {
	if c.Database == "" {
		c.Database = "default"
	}
	if c.User == "" {
		c.User = "default"
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = 60 * time.Second
	}
	if c.QueryTimeout == 0 {
		c.QueryTimeout = 60 * time.Second
	}
	if c.MaxOpenConns == 0 {
		c.MaxOpenConns = 10
	}
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("clickhouse: Config.Addr is required"))
	} else if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("clickhouse: Config.Addr %q is not host:port: %w", c.Addr, err))
	}
	if c.Database != "" && !validIdentifier(c.Database) {
		errs = append(errs, fmt.Errorf("clickhouse: Config.Database %q: use letters, digits and _ only", c.Database))
	}
	if c.DialTimeout < 0 || c.ReadTimeout < 0 || c.QueryTimeout < 0 {
		errs = append(errs, errors.New("clickhouse: timeouts must not be negative"))
	}
	if c.MaxOpenConns < 0 {
		errs = append(errs, fmt.Errorf("clickhouse: Config.MaxOpenConns %d is negative", c.MaxOpenConns))
	}
	return errors.Join(errs...)
}

// WithDatabase returns a copy of c that uses database db.
func (c Config) WithDatabase(db string) Config {
	c.Database = db
	return c
}

// validIdentifier reports whether s is a plain identifier that needs no
// quoting: letters, digits and _, not starting with a digit.
func validIdentifier(s string) bool {
	if s == "" || len(s) > maxIdentifier {
		return false
	}
	for i, r := range s {
		letter := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r == '_'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// maxIdentifier keeps names well below file-name limits: ClickHouse names
// directories after databases and tables.
const maxIdentifier = 200
