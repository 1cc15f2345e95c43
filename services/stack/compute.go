package stack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/capacity"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

// Compute configures the sandbox provider a system runs tools in. Model
// providers are chosen in models.go; this is the other half of provider
// selection.
type Compute struct {
	// Provider is "bwrap", "local" or "auto" ("" = auto): bwrap when it can
	// create sandboxes here, else — only with AllowUnisolated — local; or
	// the id of an installed provider plugin, which Plugin configures.
	Provider string
	// Plugin runs the provider plugin Provider names (see package epp); set
	// by the caller from the installed plugin and its settings.
	Plugin *epp.Config
	// Dir holds the sandboxes on the host. Required.
	Dir string
	// AllowUnisolated lets auto fall back to local (no isolation) with a
	// warning; only `xbot dev` sets it. Elsewhere auto fails closed.
	AllowUnisolated bool
	// UID and GID are the host ids of tool processes when xbot runs as root
	// (bwrap); 0 takes bwrap's defaults.
	UID, GID int
	// Limits are each sandbox's defaults (a profile may set its own), and
	// LimitMechanism and CgroupParent what enforces them (see bwrap.Config).
	Limits                       compute.Limits
	LimitMechanism, CgroupParent string
	// PerTenant and Total cap the sandboxes open at once; a run over a cap
	// waits up to Wait for a slot (see capacity.Config).
	PerTenant, Total int
	Wait             time.Duration
	// Logger receives the provider's start-up lines. Required.
	Logger *zap.Logger
}

// NewCompute builds the provider c names, limited and capped as c says.
func NewCompute(c Compute) (compute.Provider, error) {
	if c.Logger == nil {
		return nil, errors.New("stack.NewCompute: Logger is required")
	}
	p, err := c.provider()
	if err != nil {
		return nil, err
	}
	return capacity.New(capacity.Config{Provider: p, PerTenant: c.PerTenant, Total: c.Total, Wait: c.Wait})
}

func (c Compute) provider() (compute.Provider, error) {
	bcfg := bwrap.Config{Dir: c.Dir, Logger: c.Logger, UID: c.UID, GID: c.GID, Limits: c.Limits,
		LimitMechanism: c.LimitMechanism, CgroupParent: c.CgroupParent}
	lcfg := local.Config{Dir: c.Dir, Logger: c.Logger, Limits: c.Limits, LimitMechanism: c.LimitMechanism}
	if c.Plugin != nil && c.Plugin.ID == c.Provider {
		return c.plugin()
	}
	switch c.Provider {
	case "bwrap":
		return bwrap.New(bcfg)
	case "local":
		return local.New(lcfg)
	case "auto", "":
		p, err := bwrap.New(bcfg)
		if err == nil || !errors.Is(err, compute.ErrUnavailable) {
			return p, err
		}
		if !c.AllowUnisolated {
			return nil, fmt.Errorf("compute_provider=auto: no sandbox can be created here, and tools never run "+
				"unisolated outside `xbot dev`: %w; or set compute_provider=local to run them WITHOUT isolation", err)
		}
		c.Logger.Warn("bwrap is not usable here; tools run WITHOUT isolation (install bubblewrap for sandboxing)", zap.Error(err))
		return local.New(lcfg)
	default:
		return nil, fmt.Errorf("compute_provider %q: want bwrap, local, auto or an installed provider", c.Provider)
	}
}

// pluginStart bounds checking a plugin at start (its initialize, within
// its own startup timeout, and shutdown).
const pluginStart = time.Minute

// plugin starts the provider plugin once to check it, and warns that its
// isolation is what the plugin says, not what xbot enforces.
func (c Compute) plugin() (compute.Provider, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pluginStart)
	defer cancel()
	p, err := epp.New(ctx, *c.Plugin)
	if err != nil {
		return nil, fmt.Errorf("compute_provider %s: %w", c.Provider, err)
	}
	c.Logger.Info("compute provider plugin", zap.String("provider", p.Name()), zap.String("isolation", p.Isolation()),
		zap.String("limits", p.Mechanism()))
	if p.Isolation() == "none" {
		c.Logger.Warn("the compute provider plugin isolates nothing: tools run WITHOUT isolation", zap.String("provider", p.Name()))
	}
	return p, nil
}
