package stack_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/executor"
)

// TestAPIAndExecutorRememberFinishedRunsAlike: with executor_remember_finished
// unset, the API guards creates on the window the executor uses.
func TestAPIAndExecutorRememberFinishedRunsAlike(t *testing.T) {
	t.Parallel()
	if api.DefaultRememberFinished != executor.DefaultRememberFinished {
		t.Fatalf("api.DefaultRememberFinished %s, executor.DefaultRememberFinished %s",
			api.DefaultRememberFinished, executor.DefaultRememberFinished)
	}
}
