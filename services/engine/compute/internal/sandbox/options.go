package sandbox

import (
	"fmt"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// checkOptions refuses a spec whose safety mode is unknown or whose working
// directory is not a clean relative path inside the workspace.
func checkOptions(spec compute.Spec) error {
	o := events.RunOptions{WorkingDirectory: spec.WorkingDirectory, SafetyMode: spec.SafetyMode}
	if probs := o.Problems(); len(probs) > 0 {
		return fmt.Errorf("%s: %s", probs[0].Field, probs[0].Message)
	}
	return nil
}
