// Package compute is the side-effect boundary: every command a tool runs and
// every file it touches goes through a Sandbox obtained from a Provider.
// Implementations: local (a directory per sandbox, no isolation, development
// only), bwrap (Linux namespaces via bubblewrap) and epp (a provider plugin
// process speaking EPP/1, see docs/providers.md).
//
// Layout inside every sandbox, as the sandboxed process sees it:
//
//	/workspace                                   the sandbox key's persistent workspace (cwd by default)
//	/sessions/{sessionId}/context                history shared by a session's runs
//	/sessions/{sessionId}/runs/{runId}/input     the run's input (read-only for tools)
//	/sessions/{sessionId}/runs/{runId}/output    the run's deliverables
//	/sessions/{sessionId}/runs/{runId}/tmp       scratch space (TMPDIR)
//	/skills/{skillVersionId}                     a skill version of the run (read-only)
//
// Paths given to a Sandbox are these sandbox paths: absolute, or relative to
// the run's working directory (Spec.WorkingDirectory; /workspace unless the
// run names a directory below it). A path that leaves the sandbox (..,
// symlinks) is refused with ErrPathOutside.
//
// Spec.SafetyMode bounds what a run may change: read-only makes /workspace
// and the session's context read-only (for commands and WriteFile alike),
// leaving only the run's own output and tmp writable; workspace-write (the
// default) makes the workspace and the run's directories writable and
// nothing else; danger-full-access also leaves the sandbox's own root
// filesystem writable (bwrap: a tmpfs of each command's, discarded when it
// ends). The local provider isolates nothing: it enforces read-only for
// WriteFile only, never for commands.
package compute

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// Key routes a run to its sandbox. Runs with the same key
// share /workspace.
type Key struct {
	TenantID    string
	WorkspaceID string
	AgentID     string
	OwnerID     string
}

// Spec is what a run asks of its sandbox.
type Spec struct {
	Key       Key
	SessionID string // "" is stored as "_"
	RunID     string
	// Network allows outbound network access (bwrap); default none. Only
	// public addresses are reachable: loopback, link-local, private and
	// reserved ranges and the host's own addresses are not, except those
	// AllowHosts lists.
	Network bool
	// AllowHosts are IPv4 addresses or CIDRs a networked sandbox may reach
	// although they are in a blocked range (e.g. an internal package
	// mirror). Ignored without Network.
	AllowHosts []string
	// Env is the allow-list of extra environment variables (name=value) given
	// to processes. Nothing from the executor's own environment is inherited.
	Env []string
	// Limits bound the sandbox's resources; a zero field takes the
	// provider's default.
	Limits Limits
	// SafetyMode bounds what the run may change (see the package comment);
	// "" is workspace-write.
	SafetyMode events.SafetyMode
	// WorkingDirectory is where commands start and relative paths resolve:
	// a clean path relative to /workspace that stays inside it
	// (events.RunOptions.Problems); "" is /workspace itself. It must exist
	// when a command starts there; WriteFile creates it when it writes
	// below it.
	WorkingDirectory string
	// SandboxID is the provider's id of the sandbox this run attached to
	// before (recorded in its log, runtime.sandbox.attached), "" for none.
	// A provider whose sandboxes have ids of their own (Identified)
	// reconnects to exactly that sandbox and fails with ErrSandboxLost when
	// it is gone, never silently giving the run another one. Providers
	// without ids (local, bwrap) ignore it.
	SandboxID string
	// ReadOnlyMounts are host directories the sandbox sees read-only: the
	// run's skill versions at /skills/{skill_version_id}, and the
	// directories its profile names (ReadOnlyMount.Validate). Commands and
	// the file methods see them alike; writes to them fail.
	ReadOnlyMounts []ReadOnlyMount
}

// ExecRequest runs one command.
type ExecRequest struct {
	// Command is run by /bin/sh -c.
	Command string
	// Cwd is a sandbox path; "" means the run's working directory.
	Cwd string
	// Timeout kills the process group when it elapses; 0 means no limit
	// beyond ctx.
	Timeout time.Duration
	// Stdout and Stderr receive output as it is produced (may be nil).
	Stdout, Stderr io.Writer
	// Stdin is given to the process (nil = empty).
	Stdin io.Reader
}

// ExecResult is a finished command.
type ExecResult struct {
	ExitCode int
	Duration time.Duration
	// TimedOut is true when Timeout killed the command.
	TimedOut bool
}

// FileInfo is one entry of ListFiles.
type FileInfo struct {
	Path  string `json:"path"` // sandbox path
	Size  int64  `json:"size"`
	IsDir bool   `json:"isDir"`
}

// Sandbox is one run's view of its compute environment. Methods are safe for
// concurrent use.
type Sandbox interface {
	// Exec runs a command. When ctx ends or the timeout elapses the whole
	// process group is killed and Exec returns within 2 seconds; ctx's error
	// is returned when ctx ended. A non-zero exit is not an error; a command
	// that hit one of the sandbox's Limits returns its result and a
	// *LimitError.
	Exec(ctx context.Context, req ExecRequest) (ExecResult, error)
	// ReadFile reads at most limit bytes (limit <= 0: no limit) of a file;
	// truncated reports whether the file is longer.
	ReadFile(ctx context.Context, path string, limit int64) (data []byte, truncated bool, err error)
	// WriteFile writes data, creating parent directories. A write that
	// would exceed Limits.WorkspaceBytes is refused with a *LimitError.
	WriteFile(ctx context.Context, path string, data []byte) error
	// ListFiles lists dir recursively up to depth levels (1 = direct
	// children), sorted by path; at most MaxListed entries, which of them
	// the provider's choice when there are more.
	ListFiles(ctx context.Context, dir string, depth int) ([]FileInfo, error)
	// Paths returns the run's sandbox paths.
	Paths() Paths
	// Kill kills every process the sandbox is running.
	Kill() error
	// Close releases the run's hold on the sandbox; the workspace remains.
	Close() error
}

// MaxListed bounds a listing (Sandbox.ListFiles): a directory a command
// filled with millions of entries costs the executor no more than this.
const MaxListed = 10_000

// Paths are a run's directories as sandbox paths.
type Paths struct {
	// WorkingDirectory is where commands start and relative paths
	// resolve: Workspace, or the directory below it the run named.
	WorkingDirectory string
	Workspace        string
	Context          string
	Input            string
	Output           string
	Tmp              string
}

// Provider creates or reuses sandboxes.
type Provider interface {
	// Name is "local", "bwrap", ...
	Name() string
	// Open returns the run's handle on the sandbox of spec.Key, created or
	// reused. What the sandbox holds on the host may be created when the
	// handle first needs it (local and bwrap: a write creates the directory
	// it writes into, a command all of the run's directories), so a run
	// that never uses its handle costs nothing there.
	Open(ctx context.Context, spec Spec) (Sandbox, error)
	// Destroy removes everything stored for a key.
	Destroy(ctx context.Context, key Key) error
}

// Errors.
var (
	// ErrLimit is wrapped by every *LimitError.
	ErrLimit       = errors.New("sandbox resource limit reached")
	ErrPathOutside = errors.New("path is outside the sandbox")
	ErrNotFound    = errors.New("no such file or directory")
	ErrUnavailable = errors.New("sandbox provider is not available on this machine")
	// ErrSandboxLost means the sandbox itself is gone or broken: its
	// directories were deleted under the run, its processes' host went away,
	// or its provider crashed. Nothing more can run in this handle; a new
	// Open of the same key gets a fresh sandbox. The engine fails the tool
	// call and the run with sandbox_error.
	ErrSandboxLost = errors.New("the sandbox was lost")
)
