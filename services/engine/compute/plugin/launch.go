package plugin

import (
	"path/filepath"
	"slices"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
)

// Inherits are the core settings the plugin receives: those its manifest
// asks for that the user consented to.
func (in *Installed) Inherits() []string {
	var out []string
	for _, k := range in.Manifest.Core.Inherit {
		if slices.Contains(in.Receipt.Consented.Inherit, k) {
			out = append(out, k)
		}
	}
	return out
}

// ProviderConfig is the configuration that runs the installed plugin as a
// compute provider with settings (its own fields and the Inherits, resolved
// by the caller): every start of a plugin process first checks the tree
// (Verify), and only consented features and passthrough variables count.
func (in *Installed) ProviderConfig(settings map[string]string, host Host, log *zap.Logger) epp.Config {
	startup, call := in.Manifest.Runtime.Timeouts()
	var feats []string
	for _, f := range in.Manifest.Features.Supported {
		if slices.Contains(in.Receipt.Consented.Features, f) {
			feats = append(feats, f)
		}
	}
	return epp.Config{ID: in.ID(), Dir: in.Dir, Command: in.Manifest.Runtime.Command,
		DataDir: filepath.Join(in.Dir, DataDir), Settings: settings, Secrets: in.Manifest.Secrets(), Features: feats,
		EnvPassthrough: in.Receipt.Consented.Security.EnvPassthrough, StartupTimeout: startup, CallTimeout: call,
		Verify: in.Verify, HostName: host.Name, HostVersion: host.Version, Logger: log}
}
