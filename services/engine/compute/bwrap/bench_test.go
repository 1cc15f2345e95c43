package bwrap_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/bwrap"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// BenchmarkExec times `true` in a bwrap sandbox, without a network and
// with one (pasta's, bwrap/network), against the raw baseline of exec'ing
// /bin/sh -c true directly, and reports the CPU of this process and of its
// children per command.
func BenchmarkExec(b *testing.B) {
	b.Run("raw", computetest.RawExec)
	for _, network := range []bool{false, true} {
		name := "bwrap"
		if network {
			name = "bwrap-network"
		}
		b.Run(name, func(b *testing.B) {
			p, err := bwrap.New(bwrap.Config{Dir: computetest.Dir(b), Logger: zap.NewNop()})
			if err != nil {
				b.Skipf("bwrap unavailable: %v", err)
			}
			sb, err := p.Open(b.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a",
				OwnerID: "o"}, SessionID: "s", RunID: "r", Network: network})
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
}

// BenchmarkARunInANewSessionAfterMany: one run of one `true` command in a
// session of its own (as a create without a session is), on a sandbox key
// that earlier one-run sessions used. Every run mounts its session's
// context; what the earlier sessions left below the key is what the
// workspace check after each command walks, and what it counts against the
// workspace limit.
//
//	go test -run '^$' -bench ARunInANewSessionAfterMany -benchtime 200x ./services/engine/compute/bwrap/
func BenchmarkARunInANewSessionAfterMany(b *testing.B) {
	for _, history := range []int{0, 2000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			dir := computetest.Dir(b)
			p, err := bwrap.New(bwrap.Config{Dir: dir, Logger: zap.NewNop()})
			if err != nil {
				b.Skipf("bwrap unavailable: %v", err)
			}
			k := compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
			oneRun := func(session string) {
				sb, err := p.Open(b.Context(), compute.Spec{Key: k, SessionID: session, RunID: "r"})
				if err != nil {
					b.Fatal(err)
				}
				if res, err := sb.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
					b.Fatal(res, err)
				}
				if err := sb.Close(); err != nil {
					b.Fatal(err)
				}
			}
			for i := range history {
				oneRun(fmt.Sprintf("past-%d", i))
			}
			n := 0
			computetest.MeasureCPU(b, func() {
				n++
				oneRun(fmt.Sprintf("now-%d", n))
			})
			ents, _ := os.ReadDir(filepath.Join(dir, "t/w/a/o/sessions"))
			b.ReportMetric(float64(len(ents)), "sessions-kept")
		})
	}
}

// BenchmarkANetworkedRun: a networked run's sandbox as the engine uses it,
// runs one after another: a handle opened, three `true` commands, the
// handle closed. The handle's namespace (its pasta) ends after Close
// returns, so the last runs' pastas may not be in child-cpu-µs/op yet.
//
//	go test -run '^$' -bench ANetworkedRun -benchtime 100x ./services/engine/compute/bwrap/
func BenchmarkANetworkedRun(b *testing.B) {
	p, err := bwrap.New(bwrap.Config{Dir: computetest.Dir(b), Logger: zap.NewNop()})
	if err != nil {
		b.Skipf("bwrap unavailable: %v", err)
	}
	k := compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
	n := 0
	computetest.MeasureCPU(b, func() {
		n++
		sb, err := p.Open(b.Context(), compute.Spec{Key: k, SessionID: "s", RunID: fmt.Sprintf("r%d", n), Network: true})
		if err != nil {
			b.Fatal(err)
		}
		for range 3 {
			if res, err := sb.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
				b.Fatal(res, err)
			}
		}
		if err := sb.Close(); err != nil {
			b.Fatal(err)
		}
	})
}
