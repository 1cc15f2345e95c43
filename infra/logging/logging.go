package logging

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Format names.
const (
	// FormatConsole is the human-friendly, tab-separated development format.
	FormatConsole = "console"
	// FormatJSON is the production format: one JSON object per line.
	FormatJSON = "json"
)

// Levels lists the accepted level names, lowest first.
var Levels = []string{"debug", "info", "warn", "error", "dpanic", "panic", "fatal"}

// Config configures New.
type Config struct {
	// Level is the minimum level written, one of Levels (case-insensitive).
	// Default "info".
	Level string
	// Format is FormatConsole or FormatJSON. Default FormatJSON; `xbot dev`
	// passes FormatConsole.
	Format string
	// Output receives the log entries. Default os.Stderr.
	Output io.Writer
}

func (c *Config) setDefaults() {
	c.Level = strings.ToLower(strings.TrimSpace(c.Level))
	c.Format = strings.ToLower(strings.TrimSpace(c.Format))
	if c.Level == "" {
		c.Level = "info"
	}
	if c.Format == "" {
		c.Format = FormatJSON
	}
	if c.Output == nil {
		c.Output = os.Stderr
	}
}

// Validate reports every invalid field; it applies defaults to a copy first,
// so empty fields are valid.
func (c Config) Validate() error {
	c.setDefaults()
	var errs []error
	if !slices.Contains(Levels, c.Level) {
		errs = append(errs, fmt.Errorf("log level %q: want one of %s", c.Level, strings.Join(Levels, ", ")))
	}
	if c.Format != FormatConsole && c.Format != FormatJSON {
		errs = append(errs, fmt.Errorf("log format %q: want %s or %s", c.Format, FormatConsole, FormatJSON))
	}
	return errors.Join(errs...)
}

// New returns a logger writing cfg.Format entries at cfg.Level and above to
// cfg.Output, with caller information and stack traces on errors. Call Sync
// on it before exiting to flush buffered entries.
func New(cfg Config) (*zap.Logger, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	level, err := zapcore.ParseLevel(cfg.Level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	out := zapcore.Lock(zapcore.AddSync(cfg.Output))
	core := zapcore.NewCore(encoder(cfg), out, level)
	return zap.New(core,
		zap.AddCaller(),
		zap.AddStacktrace(zapcore.ErrorLevel),
		zap.ErrorOutput(out),
	), nil
}

func encoder(cfg Config) zapcore.Encoder {
	if cfg.Format == FormatJSON {
		ec := zap.NewProductionEncoderConfig()
		ec.EncodeTime = zapcore.ISO8601TimeEncoder
		return zapcore.NewJSONEncoder(ec)
	}
	ec := zap.NewDevelopmentEncoderConfig()
	if isTerminal(cfg.Output) && os.Getenv("NO_COLOR") == "" {
		ec.EncodeLevel = zapcore.CapitalColorLevelEncoder
	}
	return zapcore.NewConsoleEncoder(ec)
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
