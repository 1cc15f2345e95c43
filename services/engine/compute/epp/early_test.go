package epp_test

import (
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// TestOutputBeforeTheAnswerIsKept: a plugin that sends a process's output
// and exit before its exec.start answer loses none of them.
func TestOutputBeforeTheAnswerIsKept(t *testing.T) {
	t.Parallel()
	cfg := helperConfig(t, "early", "")
	cfg.Features = append(cfg.Features, "exec.stream")
	sb := open(t, newReference(t, cfg), spec)
	var out strings.Builder
	res, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true", Stdout: &out})
	if err != nil || res.ExitCode != 4 || out.String() != "early\n" {
		t.Errorf("Exec = %+v, %v, %q; want exit 4 and the early output", res, err, out.String())
	}
}

// TestEarlyOutputIsBounded: what a plugin sends of a process before its
// exec.start answer is kept up to a bound (1 MiB of output), not whole.
func TestEarlyOutputIsBounded(t *testing.T) {
	t.Parallel()
	cfg := helperConfig(t, "early,earlyflood", "")
	cfg.Features = append(cfg.Features, "exec.stream")
	sb := open(t, newReference(t, cfg), spec)
	var out strings.Builder
	res, err := sb.Exec(t.Context(), compute.ExecRequest{Command: "true", Stdout: &out})
	if err != nil || res.ExitCode != 4 {
		t.Fatalf("Exec = %+v, %v; want exit 4", res, err)
	}
	if got := out.String(); len(got) > 1<<20 || !strings.HasPrefix(got, strings.Repeat("a", 512<<10)) {
		t.Errorf("kept %d bytes of early output (starting %q), want the first at most 1 MiB", len(got), got[:min(8, len(got))])
	}
}
