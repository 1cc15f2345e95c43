package local_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// BenchmarkARunOnAKeyWithHistory: one run of one `true` command on a
// sandbox key that earlier runs used, each of which ran `true` too. The
// workspace check after a command walks the key's directory, so what the
// earlier runs left there is what a command costs more.
//
//	go test -run '^$' -bench ARunOnAKeyWithHistory -benchtime 200x ./services/engine/compute/local/
func BenchmarkARunOnAKeyWithHistory(b *testing.B) {
	for _, history := range []int{0, 2000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			dir := b.TempDir()
			p := providerIn(b, dir)
			k := compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
			oneRun := func(id string) {
				sb, err := p.Open(b.Context(), compute.Spec{Key: k, SessionID: "s", RunID: id})
				if err != nil {
					b.Fatal(err)
				}
				if res, err := sb.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
					b.Fatalf("%+v %v", res, err)
				}
				if err := sb.Close(); err != nil {
					b.Fatal(err)
				}
			}
			for i := range history {
				oneRun(fmt.Sprintf("past-%d", i))
			}
			b.ResetTimer()
			for i := range b.N {
				oneRun(fmt.Sprintf("now-%d", i))
			}
			b.StopTimer()
			ents, _ := os.ReadDir(filepath.Join(dir, "t/w/a/o/sessions/s/runs"))
			b.ReportMetric(float64(len(ents)), "run-dirs-kept")
		})
	}
}

// BenchmarkACommandInALargeWorkspace: one `true` command after another in
// a run whose workspace holds 50,000 files (a checked-out project with its
// dependencies), each followed by the workspace check.
//
//	go test -run '^$' -bench ACommandInALargeWorkspace -benchtime 50x ./services/engine/compute/local/
func BenchmarkACommandInALargeWorkspace(b *testing.B) {
	dir := b.TempDir()
	p := providerIn(b, dir)
	sb, err := p.Open(b.Context(), compute.Spec{Key: compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"},
		SessionID: "s", RunID: "r"})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	ws := filepath.Join(dir, "t/w/a/o/workspace")
	for d := range 500 {
		sub := filepath.Join(ws, "src", fmt.Sprint(d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprint(f)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		if res, err := sb.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
