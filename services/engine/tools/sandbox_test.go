package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/local"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// openSandbox opens a run's sandbox of a fresh local provider.
func openSandbox(t *testing.T) compute.Sandbox {
	t.Helper()
	p, err := local.New(local.Config{Dir: t.TempDir(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("local.New: %v", err)
	}
	sb, err := p.Open(context.Background(), compute.Spec{
		Key:       compute.Key{TenantID: "t1", WorkspaceID: "w1", AgentID: "a1", OwnerID: "o1"},
		SessionID: "s1",
		RunID:     "r1",
	})
	if err != nil {
		t.Fatalf("open sandbox: %v", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	return sb
}

// call runs a tool the way the engine does: Prepare, then Run.
func call(ctx context.Context, t *testing.T, r *tools.Registry, sb compute.Sandbox, name string, args any) tools.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	tool, valid, fail := r.Prepare(name, string(raw))
	if fail != nil {
		t.Fatalf("Prepare(%s, %s): %s: %s", name, raw, fail.ErrorCode, fail.Output)
	}
	return tool.Run(ctx, tools.Call{ID: "call_1", Name: name, Arguments: valid, Sandbox: sb})
}

// write puts a file into the sandbox.
func write(t *testing.T, sb compute.Sandbox, p, content string) {
	t.Helper()
	if err := sb.WriteFile(context.Background(), p, []byte(content)); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

// read returns a file of the sandbox.
func read(t *testing.T, sb compute.Sandbox, p string) string {
	t.Helper()
	data, _, err := sb.ReadFile(context.Background(), p, 0)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return string(data)
}

func wantCompleted(t *testing.T, r tools.Result) {
	t.Helper()
	if r.ErrorCode != "" || r.Question != "" {
		t.Fatalf("want a completed result, got error %q question %q: %s", r.ErrorCode, r.Question, r.Output)
	}
}

func wantError(t *testing.T, r tools.Result, code string) {
	t.Helper()
	if r.ErrorCode != code {
		t.Fatalf("want error %q, got %q: %s", code, r.ErrorCode, r.Output)
	}
}

// faulty wraps a real sandbox to inject faults a working sandbox never
// produces.
type faulty struct {
	compute.Sandbox
	execErr  error
	writeErr error
	// readBack transforms what ReadFile returns after a WriteFile.
	readBack func([]byte) []byte
	written  bool
}

func (f *faulty) Exec(ctx context.Context, req compute.ExecRequest) (compute.ExecResult, error) {
	if f.execErr != nil {
		return compute.ExecResult{}, f.execErr
	}
	return f.Sandbox.Exec(ctx, req)
}

func (f *faulty) WriteFile(ctx context.Context, p string, data []byte) error {
	if f.writeErr != nil {
		return f.writeErr
	}
	f.written = true
	return f.Sandbox.WriteFile(ctx, p, data)
}

func (f *faulty) ReadFile(ctx context.Context, p string, limit int64) ([]byte, bool, error) {
	data, more, err := f.Sandbox.ReadFile(ctx, p, limit)
	if err == nil && f.written && f.readBack != nil {
		data = f.readBack(data)
	}
	return data, more, err
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}
