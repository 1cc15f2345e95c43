package contracttests

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// optionCases are the per-run options every provider honours: the working
// directory, and a read-only workspace for WriteFile (what commands may
// write is the isolating providers' part, tested with each).
func optionCases() []struct {
	name string
	fn   func(t *testing.T, p compute.Provider)
} {
	return []struct {
		name string
		fn   func(t *testing.T, p compute.Provider)
	}{
		{"WorkingDirectory", computeWorkingDirectory},
		{"ReadOnlyWriteFile", computeReadOnlyWriteFile},
	}
}

func computeWorkingDirectory(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb, err := p.Open(ctx, compute.Spec{Key: newKey("workdir"), SessionID: "s1", RunID: "r1", WorkingDirectory: "a/b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	if got := sb.Paths().WorkingDirectory; got != "/workspace/a/b" {
		t.Fatalf("Paths().WorkingDirectory = %q, want /workspace/a/b", got)
	}
	if err := sb.WriteFile(ctx, "f.txt", []byte("here")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := sb.ReadFile(ctx, "/workspace/a/b/f.txt", 0); err != nil || string(data) != "here" {
		t.Fatalf("a relative write did not land in the working directory: %q, %v", data, err)
	}
	if out := mustExec(t, sb, compute.ExecRequest{Command: "cat f.txt"}); out != "here" {
		t.Fatalf("a command does not start in the working directory: it read %q", out)
	}
}

func computeReadOnlyWriteFile(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	sb, err := p.Open(ctx, compute.Spec{Key: newKey("readonly"), SessionID: "s1", RunID: "r1", SafetyMode: events.SafetyReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	for _, path := range []string{"f.txt", "/workspace/d/f.txt", "/sessions/s1/context/f.txt"} {
		if err := sb.WriteFile(ctx, path, []byte("x")); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("WriteFile(%s) in read-only mode = %v, want fs.ErrPermission", path, err)
		}
	}
	if err := sb.WriteFile(ctx, "/sessions/s1/runs/r1/output/f.txt", []byte("x")); err != nil {
		t.Errorf("WriteFile to the run's output in read-only mode: %v", err)
	}
}
