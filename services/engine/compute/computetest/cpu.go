package computetest

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// MeasureCPU calls run b.N times and reports the CPU this process and its
// children spent per call: "self-cpu-µs/op" and "child-cpu-µs/op".
func MeasureCPU(b *testing.B, run func()) {
	b.Helper()
	self, children := cpu(syscall.RUSAGE_SELF), cpu(syscall.RUSAGE_CHILDREN)
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64((cpu(syscall.RUSAGE_SELF)-self).Microseconds())/float64(b.N), "self-cpu-µs/op")
	b.ReportMetric(float64((cpu(syscall.RUSAGE_CHILDREN)-children).Microseconds())/float64(b.N), "child-cpu-µs/op")
}

// RawExec is the raw baseline of a sandboxed `true`: /bin/sh -c true
// exec'd directly, no sandbox, no limits; run it as a sub-benchmark "raw".
func RawExec(b *testing.B) {
	MeasureCPU(b, func() {
		if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil { //nolint:noctx // a benchmark's baseline
			b.Fatal(err)
		}
	})
}

// SelfCPU is the user and system time of this process so far.
func SelfCPU() time.Duration { return cpu(syscall.RUSAGE_SELF) }

// cpu is the user and system time of who (RUSAGE_SELF, RUSAGE_CHILDREN).
func cpu(who int) time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
