package bwrap_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// BenchmarkExec times `true` in a bwrap sandbox (no network) against the
// raw baseline of exec'ing /bin/sh -c true directly, and reports the CPU of
// this process and of its children per command.
func BenchmarkExec(b *testing.B) {
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
			if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		})
	})
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
		measure(b, func() {
			if res, err := sb.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		})
	})
}
