package bwrap_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/compute"
)

// TestSafetyReadOnly: in safety mode read-only neither a command nor
// WriteFile can change the workspace or the session's context; the run's
// own output and tmp stay writable, and what is there can be read.
func TestSafetyReadOnly(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	rw := open(t, p, compute.Spec{})
	if err := rw.WriteFile(t.Context(), "seen.txt", []byte("before")); err != nil {
		t.Fatal(err)
	}
	ro := open(t, p, compute.Spec{SafetyMode: events.SafetyReadOnly})
	for _, cmd := range []string{"touch /workspace/new", "echo x >> /workspace/seen.txt", "rm /workspace/seen.txt",
		"mkdir /workspace/d", "touch /sessions/s/context/new"} {
		run(t, ro, cmd, 1)
	}
	if out := run(t, ro, "cat /workspace/seen.txt; touch /sessions/s/runs/r/output/ok /sessions/s/runs/r/tmp/ok /tmp/ok", 0); out != "before" {
		t.Fatalf("read-only sandbox read %q, want the workspace's file", out)
	}
	err := ro.WriteFile(t.Context(), "/workspace/new.txt", []byte("x"))
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("WriteFile in a read-only workspace = %v, want fs.ErrPermission", err)
	}
	if err := ro.WriteFile(t.Context(), "/sessions/s/runs/r/output/report.txt", []byte("x")); err != nil {
		t.Fatalf("WriteFile to the run's output in read-only mode: %v", err)
	}
	if _, _, err := rw.ReadFile(t.Context(), "new.txt", 0); !errors.Is(err, compute.ErrNotFound) {
		t.Fatalf("the read-only run's write reached the workspace: %v", err)
	}
}

// TestSafetyModesAndRoot: workspace-write keeps the root read-only;
// danger-full-access leaves it writable, a tmpfs the command's own.
func TestSafetyModesAndRoot(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	run(t, open(t, p, compute.Spec{SafetyMode: events.SafetyWorkspaceWrite}), "mkdir /scratch", 1)
	full := open(t, p, compute.Spec{SafetyMode: events.SafetyDangerFullAccess})
	run(t, full, "mkdir /scratch && touch /scratch/x /workspace/full", 0)
	run(t, full, "test ! -e /scratch", 0) // the next command's root is new
	run(t, full, "touch /usr/x", 1)       // the host's system stays read-only
}

// TestWorkingDirectory: a run's commands start in its working directory,
// and relative paths of every method resolve against it.
func TestWorkingDirectory(t *testing.T) {
	t.Parallel()
	sb := open(t, newProvider(t), compute.Spec{WorkingDirectory: "services/api"})
	if got := sb.Paths().WorkingDirectory; got != "/workspace/services/api" {
		t.Fatalf("Paths().WorkingDirectory = %q", got)
	}
	if err := sb.WriteFile(t.Context(), "main.go", []byte("package main")); err != nil {
		t.Fatal(err)
	}
	if out := run(t, sb, "pwd; cat main.go; cat /workspace/services/api/main.go", 0); out != "/workspace/services/api\npackage mainpackage main" {
		t.Fatalf("command saw %q", out)
	}
	files, err := sb.ListFiles(t.Context(), "", 1)
	if err != nil || len(files) != 1 || files[0].Path != "/workspace/services/api/main.go" {
		t.Fatalf("ListFiles(\"\") = %+v, %v", files, err)
	}
}

// TestSpecOptionsChecked: Open refuses a working directory outside the
// workspace and an unknown safety mode.
func TestSpecOptionsChecked(t *testing.T) {
	t.Parallel()
	p := newProvider(t)
	for _, spec := range []compute.Spec{{WorkingDirectory: "../other"}, {WorkingDirectory: "/etc"}, {SafetyMode: "yolo"}} {
		spec.Key = compute.Key{TenantID: "t", WorkspaceID: "w", AgentID: "a", OwnerID: "o"}
		spec.RunID = "r"
		if sb, err := p.Open(t.Context(), spec); err == nil || !strings.Contains(err.Error(), "open sandbox") {
			if sb != nil {
				_ = sb.Close()
			}
			t.Errorf("Open(%+v) = %v, want refused", spec, err)
		}
	}
}
