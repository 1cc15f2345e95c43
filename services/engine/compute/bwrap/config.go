package bwrap

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

// Config configures the bwrap provider.
type Config struct {
	// Dir is the base directory of all sandboxes on the host; created (mode
	// 0700, or 0710 with group GID when the executor runs as root) if
	// missing. Required.
	Dir string
	// Logger receives one line naming the bwrap binary. Required.
	Logger *zap.Logger
	// Binary is the bwrap executable, looked up in PATH. Default "bwrap".
	Binary string
	// ReadOnlyPaths are extra host paths (absolute) bound read-only at the
	// same path, e.g. /opt/toolchain or /etc/java-17-openjdk; missing ones
	// are skipped. They must be readable by the sandbox user. Default none.
	ReadOnlyPaths []string
	// UID and GID are the host user and group every sandboxed process runs
	// as when the executor runs as root, so that no tool ever runs as host
	// root. They must not be 0; a dedicated id that no login user has is
	// best. Default DefaultUID and DefaultGID. Without root they are
	// ignored: processes run as the executor's own user.
	UID, GID int
	// Pasta is the pasta executable (Debian package passt) that connects a
	// networked sandbox's own network namespace to the outside, looked up
	// in PATH. Default "pasta". Missing, only networked sandboxes fail.
	Pasta string
	// IP is iproute2's ip, run inside that namespace to confine its routes.
	// Default "ip".
	IP string
	// Nsenter is util-linux's nsenter, with which each command of a
	// networked sandbox enters the namespace its handle keeps. Default
	// "nsenter".
	Nsenter string
	// Limits are the limits of a sandbox whose Spec sets none; a zero field
	// takes the default (1 GiB memory, 256 processes, one core, 1 GiB of
	// disk).
	Limits compute.Limits
	// LimitMechanism enforces memory, pids and cpu: "auto" (default: cgroup
	// v2, else cgroup v1, else rlimits), "cgroup2", "cgroup1" or "rlimit".
	// Asking for a cgroup version that is not usable here fails New.
	LimitMechanism string
	// CgroupParent is a cgroup v2 directory delegated to the executor (no
	// process inside), below which each sandbox gets its group. Default:
	// the executor's own group.
	CgroupParent string
}

func (c Config) limits() sandbox.LimitConfig {
	return sandbox.LimitConfig{Defaults: c.Limits, Mechanism: c.LimitMechanism, CgroupParent: c.CgroupParent}
}

func (c *Config) setDefaults() {
	if c.Binary == "" {
		c.Binary = "bwrap"
	}
	if c.UID == 0 {
		c.UID = DefaultUID
	}
	if c.GID == 0 {
		c.GID = DefaultGID
	}
	if c.Pasta == "" {
		c.Pasta = "pasta"
	}
	if c.IP == "" {
		c.IP = "ip"
	}
	if c.Nsenter == "" {
		c.Nsenter = "nsenter"
	}
}

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if c.Dir == "" {
		errs = append(errs, errors.New("bwrap compute provider: Dir is required"))
	}
	if c.Logger == nil {
		errs = append(errs, errors.New("bwrap compute provider: Logger is required"))
	}
	if err := c.limits().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("bwrap compute provider: %w", err))
	}
	for _, p := range c.ReadOnlyPaths {
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" || reserved(p) {
			errs = append(errs, fmt.Errorf("bwrap compute provider: ReadOnlyPaths: %q must be a clean absolute path "+
				"other than /, /workspace, /sessions, /proc, /dev, /tmp", p))
		}
	}
	if c.UID < 0 || c.GID < 0 || c.UID > 1<<31-2 || c.GID > 1<<31-2 {
		errs = append(errs, fmt.Errorf("bwrap compute provider: sandbox uid %d / gid %d: want ids from 1 to %d (never 0, root)",
			c.UID, c.GID, 1<<31-2))
	}
	return errors.Join(errs...)
}

func reserved(p string) bool {
	for _, r := range []string{"/workspace", "/sessions", "/proc", "/dev", "/tmp"} {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}
