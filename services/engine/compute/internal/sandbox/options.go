package sandbox

import (
	"errors"
	"fmt"
	"os"

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

// checkMounts refuses read-only mounts whose paths are not allowed
// (compute.CheckMounts) or whose source is not a directory.
func checkMounts(mounts []compute.ReadOnlyMount) error {
	if err := compute.CheckMounts(mounts); err != nil {
		return err
	}
	var errs []error
	for _, m := range mounts {
		if fi, err := os.Stat(m.Source); err != nil || !fi.IsDir() {
			errs = append(errs, fmt.Errorf("%w: the source of %s is not a directory", compute.ErrBadMount, m.Target))
		}
	}
	return errors.Join(errs...)
}
