package local_test

import (
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/xbot-runtime/xbot/contracttests"
	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/internal/sandbox"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

func TestSandboxDeletedWhileACommandRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := local.New(local.Config{Dir: dir, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	contracttests.ComputeSandboxDeleted(t, p, func(k compute.Key) string {
		d, err := sandbox.KeyDir(dir, k)
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
