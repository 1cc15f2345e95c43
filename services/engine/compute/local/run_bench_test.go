package local_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

// BenchmarkARunsSandbox: the sandbox of one run of `xbot bench`'s default
// workload, with xbot's default limits: the handle opened, three `true`
// commands, the handle closed. The runs follow each other on one sandbox
// key, each in a session of its own, as one client's runs of the bench do. cpu-ms/run is this process's CPU and its children's
// (the commands), from getrusage.
//
//	go test -run '^$' -bench ARunsSandbox -benchtime 500x ./services/engine/compute/local/
func BenchmarkARunsSandbox(b *testing.B) {
	p, err := local.New(local.Config{Dir: b.TempDir(), Logger: zap.NewNop(), Limits: compute.Limits{
		MemoryBytes: 1024 << 20, Pids: 256, CPUMillis: 1000, WorkspaceBytes: 1024 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	before := cpuNow(b)
	i := 0
	for b.Loop() {
		k := compute.Key{TenantID: "t", WorkspaceID: "default", AgentID: "demo", OwnerID: "o"}
		sb, err := p.Open(b.Context(), compute.Spec{Key: k, SessionID: fmt.Sprint("s", i), RunID: fmt.Sprint("r", i)})
		if err != nil {
			b.Fatal(err)
		}
		for range 3 {
			if res, err := sb.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
				b.Fatalf("%+v %v", res, err)
			}
		}
		if err := sb.Close(); err != nil {
			b.Fatal(err)
		}
		i++
	}
	used := cpuNow(b) - before
	b.ReportMetric(float64(used.Microseconds())/1000/float64(b.N), "cpu-ms/run")
}

// cpuNow is the CPU this process and its waited-for children have used.
func cpuNow(b *testing.B) time.Duration {
	var self, kids syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids); err != nil {
		b.Fatal(err)
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}
