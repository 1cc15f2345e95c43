package local_test

import (
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
)

// BenchmarkARunsSandbox: the sandbox of one run of `xbot bench`'s default
// workload, with xbot's default limits: the handle opened, three `true`
// commands, the handle closed. The runs follow each other on one sandbox
// key, each in a session of its own, as one client's runs of the bench do.
// self-cpu-µs/op is this process's CPU a run, child-cpu-µs/op the
// commands'.
//
//	go test -run '^$' -bench ARunsSandbox -benchtime 1000x ./services/engine/compute/local/
func BenchmarkARunsSandbox(b *testing.B) {
	p, err := local.New(local.Config{Dir: b.TempDir(), Logger: zap.NewNop(), Limits: compute.Limits{
		MemoryBytes: 1024 << 20, Pids: 256, CPUMillis: 1000, WorkspaceBytes: 1024 << 20}})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	computetest.MeasureCPU(b, func() {
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
	})
}
