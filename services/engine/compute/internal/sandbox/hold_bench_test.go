package sandbox

import (
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// BenchmarkHold times `true` run by a box held each way against the raw
// baseline of exec'ing /bin/sh -c true directly (no box, no limits), and
// reports the CPU of this process and of its children per command.
func BenchmarkHold(b *testing.B) {
	b.Run("raw", computetest.RawExec)
	for _, h := range []hold{holdGate, holdTrace} {
		b.Run(h.String(), func(b *testing.B) {
			if h == holdTrace {
				if got, why := chooseHold(nil); got != holdTrace {
					b.Skipf("no ptrace here: %s", why)
				}
			}
			p, err := NewProvider("bench", b.TempDir(), hostLaunch(nil), LimitConfig{}, WithHostPaths())
			if err != nil {
				b.Fatal(err)
			}
			p.limiter.hold = h
			box, err := p.Open(b.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a",
				OwnerID: "o"}, SessionID: "s", RunID: "r"})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = box.Close() }()
			computetest.MeasureCPU(b, func() {
				if res, err := box.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
					b.Fatal(res, err)
				}
			})
		})
	}
}
