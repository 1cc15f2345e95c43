package wmkafka

import (
	"maps"
	"slices"

	"github.com/ThreeDotsLabs/watermill"
	"go.uber.org/zap"
)

// ZapLogger adapts a *zap.Logger to watermill.LoggerAdapter. Watermill's
// Trace level logs at zap's Debug level.
type ZapLogger struct {
	l *zap.Logger
}

var _ watermill.LoggerAdapter = ZapLogger{}

// NewZapLogger returns an adapter over l. A nil l is a wiring mistake and panics.
func NewZapLogger(l *zap.Logger) ZapLogger {
	if l == nil {
		panic("wmkafka: NewZapLogger with nil *zap.Logger")
	}
	return ZapLogger{l: l}
}

// Error logs at error level with err attached.
func (z ZapLogger) Error(msg string, err error, fields watermill.LogFields) {
	z.l.Error(msg, append(zapFields(fields), zap.Error(err))...)
}

// Info logs at info level.
func (z ZapLogger) Info(msg string, fields watermill.LogFields) { z.l.Info(msg, zapFields(fields)...) }

// Debug logs at debug level.
func (z ZapLogger) Debug(msg string, fields watermill.LogFields) {
	z.l.Debug(msg, zapFields(fields)...)
}

// Trace logs at debug level (zap has no trace level).
func (z ZapLogger) Trace(msg string, fields watermill.LogFields) {
	z.l.Debug(msg, zapFields(fields)...)
}

// With returns an adapter that adds fields to every entry.
func (z ZapLogger) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return ZapLogger{l: z.l.With(zapFields(fields)...)}
}

// zapFields converts fields in key order, so entries read the same every time.
func zapFields(fields watermill.LogFields) []zap.Field {
	out := make([]zap.Field, 0, len(fields)+1)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		out = append(out, zap.Any(k, fields[k]))
	}
	return out
}
