package tools

import (
	"errors"
	"time"
)

// Defaults of Options.
const (
	// DefaultShellTimeout bounds a shell call that names no timeout: long
	// enough for a build or a test suite, short enough that a hung command
	// does not hold a run for long.
	DefaultShellTimeout = 120 * time.Second
	// DefaultMaxOutputBytes caps stdout and stderr of a command each. 1 MiB
	// keeps the real output of a build or a test suite for Offload to store;
	// the model and the event log see only Offload's preview of it, so the
	// cap bounds memory, not the context.
	DefaultMaxOutputBytes = 1 << 20
	// DefaultMaxReadBytes caps what read_file returns in one call (about 64k
	// tokens); the model pages through larger files with offset and limit.
	DefaultMaxReadBytes = 256 << 10
	// DefaultMaxListEntries caps list_files: a listing longer than this is
	// noise to a model, which should list a subdirectory instead.
	DefaultMaxListEntries = 500
	// DefaultMaxDiffBytes caps the diff a file change records: the diff
	// goes into the event log, where a multi-megabyte payload would not fit.
	DefaultMaxDiffBytes = 256 << 10
	// maxShellTimeout is the largest timeoutSeconds a shell call may ask for.
	maxShellTimeout = time.Hour
)

// Options configure the built-in tools. The zero value means all defaults.
type Options struct {
	// ShellTimeout is the timeout of a shell call that gives no
	// timeoutSeconds. Default DefaultShellTimeout; at most one hour.
	ShellTimeout time.Duration
	// MaxOutputBytes caps the captured stdout and the captured stderr of a
	// command, each; the head and tail are kept. Default DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MaxReadBytes caps the content read_file returns. Default DefaultMaxReadBytes.
	MaxReadBytes int
	// MaxListEntries caps the entries list_files returns. Default DefaultMaxListEntries.
	MaxListEntries int
	// MaxDiffBytes caps the diff of a write_file; longer diffs keep their
	// first hunks and say how much was left out. Default DefaultMaxDiffBytes.
	MaxDiffBytes int
}

func (o *Options) setDefaults() {
	if o.ShellTimeout == 0 {
		o.ShellTimeout = DefaultShellTimeout
	}
	if o.MaxOutputBytes == 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.MaxReadBytes == 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	if o.MaxListEntries == 0 {
		o.MaxListEntries = DefaultMaxListEntries
	}
	if o.MaxDiffBytes == 0 {
		o.MaxDiffBytes = DefaultMaxDiffBytes
	}
}

// Validate reports every option out of range (after defaults are applied,
// zero values are valid).
func (o Options) Validate() error {
	var errs []error
	if o.ShellTimeout < 0 || o.ShellTimeout > maxShellTimeout {
		errs = append(errs, errors.New("tools: ShellTimeout must be between 0 and 1h"))
	}
	if o.MaxOutputBytes < 0 {
		errs = append(errs, errors.New("tools: MaxOutputBytes must be >= 0"))
	}
	if o.MaxReadBytes < 0 {
		errs = append(errs, errors.New("tools: MaxReadBytes must be >= 0"))
	}
	if o.MaxListEntries < 0 {
		errs = append(errs, errors.New("tools: MaxListEntries must be >= 0"))
	}
	if o.MaxDiffBytes < 0 {
		errs = append(errs, errors.New("tools: MaxDiffBytes must be >= 0"))
	}
	return errors.Join(errs...)
}
