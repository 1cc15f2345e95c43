package compute

import "errors"

// ErrSandboxLost is wrapped by the errors of a sandbox that is gone or
// broken: its provider process died, or the sandbox the run attached to no
// longer exists. The run cannot go on in it.
var ErrSandboxLost = errors.New("the run's sandbox is lost")
