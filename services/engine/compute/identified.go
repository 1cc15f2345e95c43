package compute

// Identified is implemented by a Sandbox whose provider keeps the sandbox
// under an id of its own that outlives the handle (a plugin's sandbox, a
// cloud sandbox). The engine records the id in the run's log so that a new
// owner of the run reconnects to the same sandbox (Spec.SandboxID).
type Identified interface {
	// SandboxID is the provider's id of the sandbox ("" from a wrapper
	// around a sandbox without one).
	SandboxID() string
}

// SandboxIDOf returns sb's provider id, or "" when its provider keeps no
// ids (local, bwrap).
func SandboxIDOf(sb Sandbox) string {
	if id, ok := sb.(Identified); ok {
		return id.SandboxID()
	}
	return ""
}
