package epp_test

import (
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/epp"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/compute/plugin"
)

// The cost of a plugin next to its raw baseline, the local provider it
// wraps: a command in an open sandbox, and a run's sandbox session (start,
// initialize, find the sandbox, shutdown). Run with
// go test -run '^$' -bench . ./services/engine/compute/epp/

func benchPlugin(b *testing.B, verify bool) compute.Provider {
	b.Helper()
	cfg := epp.Config{ID: "local-process", Dir: pluginDir, Command: []string{"./local-process"}, DataDir: b.TempDir(),
		Features: []string{"sandbox.lifecycle", "exec.run", "exec.stream", "files.rw", "mounts.read_only"}, Logger: zap.NewNop()}
	if verify { // an installed plugin: its digest is checked at every start
		in, err := (&plugin.Store{Dir: b.TempDir()}).Install(b.Context(), plugin.Source{Dir: pluginDir},
			plugin.Options{Confirm: func(string) (bool, error) { return true, nil }})
		if err != nil {
			b.Fatal(err)
		}
		cfg = in.ProviderConfig(nil, plugin.Host{Name: "xbot"}, zap.NewNop())
	}
	p, err := epp.New(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchLocal(b *testing.B) compute.Provider {
	b.Helper()
	p, err := local.New(local.Config{Dir: b.TempDir(), Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchExec(b *testing.B, p compute.Provider) {
	sb, err := p.Open(b.Context(), spec)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sb.Close() }()
	for b.Loop() {
		if _, err := sb.Exec(b.Context(), compute.ExecRequest{Command: "true"}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchSession(b *testing.B, p compute.Provider) {
	for b.Loop() {
		sb, err := p.Open(b.Context(), spec)
		if err != nil {
			b.Fatal(err)
		}
		if err := sb.WriteFile(b.Context(), "f", []byte("x")); err != nil {
			b.Fatal(err)
		}
		_ = sb.Close()
	}
}

func BenchmarkExecLocal(b *testing.B)           { benchExec(b, benchLocal(b)) }
func BenchmarkExecPlugin(b *testing.B)          { benchExec(b, benchPlugin(b, false)) }
func BenchmarkSessionLocal(b *testing.B)        { benchSession(b, benchLocal(b)) }
func BenchmarkSessionPlugin(b *testing.B)       { benchSession(b, benchPlugin(b, false)) }
func BenchmarkSessionPluginVerify(b *testing.B) { benchSession(b, benchPlugin(b, true)) }
