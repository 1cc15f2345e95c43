package bwrap_test

import (
	"testing"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
)

func TestSandboxDeletedWhileACommandRuns(t *testing.T) {
	t.Parallel()
	dir := computetest.Dir(t)
	p := newProviderWith(t, bwrap.Config{Dir: dir})
	contracttests.ComputeSandboxDeleted(t, p, func(k compute.Key) string {
		d, err := sandbox.KeyDir(dir, k)
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
