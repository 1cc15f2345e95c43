// Package logging builds the *zap.Logger every xbot component receives by
// injection (never the global logger).
//
// Two formats exist: "console" is the human-friendly development encoder
// (colored levels only when writing to a terminal and NO_COLOR is unset) and
// "json" is the production encoder with ISO8601 timestamps, one object per
// line. Neither samples: every entry at or above the level is written.
package logging
