package bwrap_test

import (
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// BenchmarkExec times `true` in a bwrap sandbox (no network) against the
// raw baseline of exec'ing /bin/sh -c true directly, and reports the CPU of
// this process and of its children per command.
func BenchmarkExec(b *testing.B) {
	b.Run("raw", computetest.RawExec)
	b.Run("bwrap", func(b *testing.B) {
		p, err := bwrap.New(bwrap.Config{Dir: computetest.Dir(b), Logger: zap.NewNop()})
		if err != nil {
			b.Skipf("bwrap unavailable: %v", err)
		}
		sb, err := p.Open(b.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a",
			OwnerID: "o"}, SessionID: "s", RunID: "r"})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = sb.Close() }()
		computetest.MeasureCPU(b, func() {
			if res, err := sb.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		})
	})
}
