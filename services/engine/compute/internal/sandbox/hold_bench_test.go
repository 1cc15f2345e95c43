package sandbox

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// BenchmarkHold times `true` run by a box held each way against the raw
// baseline of exec'ing /bin/sh -c true directly (no box, no limits), and
// reports the CPU of this process and of its children per command.
func BenchmarkHold(b *testing.B) {
	cpu := func(who int) time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(who, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	measure := func(b *testing.B, run func()) {
		b.Helper()
		self, children := cpu(syscall.RUSAGE_SELF), cpu(syscall.RUSAGE_CHILDREN)
		for b.Loop() {
			run()
		}
		b.ReportMetric(float64((cpu(syscall.RUSAGE_SELF)-self).Microseconds())/float64(b.N), "self-cpu-µs/op")
		b.ReportMetric(float64((cpu(syscall.RUSAGE_CHILDREN)-children).Microseconds())/float64(b.N), "child-cpu-µs/op")
	}
	b.Run("raw", func(b *testing.B) {
		measure(b, func() {
			if err := exec.Command(shell, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		})
	})
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
			measure(b, func() {
				if res, err := box.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
					b.Fatal(res, err)
				}
			})
		})
	}
}
