package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// BenchmarkRunDirectories times a run's own directories on the host: a box
// of a run without a session opened, its tmp created as a command's would
// be, and the box closed, 64 keys at once, each key's runs one after
// another (as the executor runs them). The raw baseline creates and
// removes the same directories (sessions/_/runs/<r>/tmp) with plain calls,
// as every run did before a run's untouched directories became its key's
// spare. box-new-session-each gives each run a session of its own, as a
// create without a session gets: its session's directories are still
// created and removed with it.
func BenchmarkRunDirectories(b *testing.B) {
	const keys = 64
	b.Run("raw", func(b *testing.B) {
		base := b.TempDir()
		parallel(b, keys, func(key, run int) {
			dir := filepath.Join(base, "t", "w", "a", strconv.Itoa(key), "sessions", "_", "runs", strconv.Itoa(run))
			if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
				b.Fatal(err)
			}
			for _, d := range []string{filepath.Join(dir, "tmp"), dir, filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
				if err := os.Remove(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	for _, bc := range []struct {
		name        string
		sessionEach bool
	}{{"box", false}, {"box-new-session-each", true}} {
		b.Run(bc.name, func(b *testing.B) {
			p, err := NewProvider("bench", b.TempDir(), hostLaunch(nil), LimitConfig{}, WithHostPaths())
			if err != nil {
				b.Fatal(err)
			}
			parallel(b, keys, func(key, run int) {
				spec := compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a",
					OwnerID: strconv.Itoa(key)}, RunID: strconv.Itoa(run)}
				if bc.sessionEach { // as the API's creates without a session: each its own
					spec.SessionID = "s" + spec.RunID
				}
				box, err := p.Open(b.Context(), spec)
				if err != nil {
					b.Fatal(err)
				}
				if err := box.ensure(box.commandMounts("")...); err != nil {
					b.Fatal(err)
				}
				if err := box.Close(); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// parallel calls op(key, run) b.N times in all from about keys goroutines,
// each with a key of its own and its runs numbered from 0, and reports the
// CPU of this process per call.
func parallel(b *testing.B, keys int, op func(key, run int)) {
	b.Helper()
	b.SetParallelism(max(1, keys/runtime.GOMAXPROCS(0)))
	var ids atomic.Int64
	before := computetest.SelfCPU()
	b.RunParallel(func(pb *testing.PB) {
		key := int(ids.Add(1))
		for run := 0; pb.Next(); run++ {
			op(key, run)
		}
	})
	b.ReportMetric(float64((computetest.SelfCPU()-before).Microseconds())/float64(b.N), "self-cpu-µs/op")
}
