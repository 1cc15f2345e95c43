package epp

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// JSON-RPC error codes of EPP/1.
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	// CodeFailed is a provider failure; data.kind may say which.
	CodeFailed = -32000
	// CodeRefused is a request the plugin will not do (bad argument,
	// permission); data.kind may say which.
	CodeRefused = -32001
	// CodeNotFound without a kind is a sandbox that does not exist.
	CodeNotFound = -32002
)

// Kinds (error data.kind) and what the host maps them to.
const (
	KindSandboxNotFound     = "sandbox_not_found"
	KindFileNotFound        = "file_not_found"
	KindPathOutside         = "path_outside"
	KindPermissionDenied    = "permission_denied"
	KindLimitExceeded       = "limit_exceeded"
	KindFeatureNotSupported = "feature_not_supported"
	KindInvalidArgument     = "invalid_argument"
	KindTimeout             = "timeout"
	KindUnavailable         = "unavailable"
)

// Sentinels of the host. Each *Error and each failure of the plugin process
// wraps one or more of them, and compute's where one fits.
var (
	// ErrFeatureNotSupported: the plugin does not offer what was asked —
	// its manifest lacks the method's feature (no request is sent), or the
	// plugin answered -32601 or kind feature_not_supported.
	ErrFeatureNotSupported = errors.New("feature not supported by the provider")
	// ErrSandboxNotFound: the sandbox does not exist (-32002).
	ErrSandboxNotFound = errors.New("sandbox not found")
	// ErrInvalid: the plugin refused the request's arguments.
	ErrInvalid = errors.New("invalid argument")
	// ErrTimeout: a call did not complete within its time (the host sent
	// $/cancel), or the plugin reports kind timeout.
	ErrTimeout = errors.New("provider call timed out")
	// ErrProtocol: the plugin broke EPP/1 (a line that is not JSON-RPC,
	// over MaxMessageBytes, not UTF-8; a protocol version this host does
	// not speak). The plugin is killed; it wraps compute.ErrSandboxLost.
	ErrProtocol = errors.New("provider broke the EPP/1 protocol")
	// ErrPluginExited: the plugin process ended while in use; it wraps
	// compute.ErrSandboxLost.
	ErrPluginExited = errors.New("provider process exited")
	// ErrProvider is wrapped by every error the plugin answered.
	ErrProvider = errors.New("provider error")
)

// Error is an error the plugin answered. It wraps ErrProvider and the
// sentinels its code and kind map to (see kindErrors).
type Error struct {
	Provider   string
	Method     string
	Code       int
	Message    string // sanitized: control characters removed, secrets redacted
	Kind       string
	Retryable  bool
	Suggestion string
	// Limit is set for kind limit_exceeded.
	Limit *compute.LimitError
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("provider %s: %s: %s", e.Provider, e.Method, e.Message)
	if e.Suggestion != "" {
		msg += " (" + e.Suggestion + ")"
	}
	return msg
}

// Unwrap returns ErrProvider and the mapped sentinels.
func (e *Error) Unwrap() []error {
	out := []error{ErrProvider}
	if e.Limit != nil {
		out = append(out, e.Limit)
	}
	return append(out, e.mapped()...)
}

// kindErrors is the error-mapping table of kinds.
var kindErrors = map[string][]error{
	KindSandboxNotFound:     {ErrSandboxNotFound},
	KindFileNotFound:        {compute.ErrNotFound},
	KindPathOutside:         {compute.ErrPathOutside},
	KindPermissionDenied:    {fs.ErrPermission},
	KindFeatureNotSupported: {ErrFeatureNotSupported},
	KindInvalidArgument:     {ErrInvalid},
	KindTimeout:             {ErrTimeout},
	KindUnavailable:         {compute.ErrUnavailable},
}

// mapped is the error-mapping table: the kind decides where it is one the
// host knows; otherwise the code.
func (e *Error) mapped() []error {
	if errs, ok := kindErrors[e.Kind]; ok {
		return errs
	}
	switch e.Code {
	case CodeMethodNotFound:
		return []error{ErrFeatureNotSupported}
	case CodeNotFound:
		return []error{ErrSandboxNotFound}
	case CodeInvalidParams, CodeRefused:
		return []error{ErrInvalid}
	}
	return nil
}

// lost marks err as the loss of the run's sandbox.
type lost struct{ err error }

func (l *lost) Error() string   { return l.err.Error() }
func (l *lost) Unwrap() []error { return []error{l.err, compute.ErrSandboxLost} }

// sandboxLost wraps err with compute.ErrSandboxLost.
func sandboxLost(err error) error {
	if err == nil || errors.Is(err, compute.ErrSandboxLost) {
		return err
	}
	return &lost{err: err}
}

// FeatureError is the error of a method whose feature the plugin does not
// declare; no request was sent. It wraps ErrFeatureNotSupported.
type FeatureError struct {
	Provider, Method, Feature string
}

func (e *FeatureError) Error() string {
	return fmt.Sprintf("provider %s does not support %s (feature %s)", e.Provider, e.Method, e.Feature)
}

// Unwrap returns ErrFeatureNotSupported.
func (e *FeatureError) Unwrap() error { return ErrFeatureNotSupported }

// stderrShown is how much of the end of its stderr an ExitError shows.
const stderrShown = 2 << 10

// ExitError reports the plugin process's end while it was in use. It wraps
// ErrPluginExited and compute.ErrSandboxLost.
type ExitError struct {
	Provider string
	// Status is how the process ended ("exit status 2", "signal: killed").
	Status string
	// Stderr is the end of what it wrote to stderr, sanitized.
	Stderr string
	// Cause is a protocol violation that made the host kill it, if any.
	Cause error
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("provider %s: the plugin process ended (%s)", e.Provider, e.Status)
	if e.Cause != nil {
		msg = fmt.Sprintf("provider %s: %v; the plugin process was killed", e.Provider, e.Cause)
	}
	if e.Stderr != "" {
		msg += "; its stderr ends with:\n" + e.Stderr
	}
	return msg
}

// Unwrap returns ErrPluginExited, compute.ErrSandboxLost and the cause.
func (e *ExitError) Unwrap() []error {
	out := []error{ErrPluginExited, compute.ErrSandboxLost}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return out
}
