package contracttests

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/compute"
	"github.com/xbot-runtime/xbot/services/engine/compute/computetest"
)

// mountCases check Spec.ReadOnlyMounts: host directories (a skill version
// at /skills/<id>, an operator's tool directory) every provider shows to
// the file methods read-only, and an isolating provider to commands alike.
func mountCases() []struct {
	name string
	fn   func(t *testing.T, p compute.Provider)
} {
	return []struct {
		name string
		fn   func(t *testing.T, p compute.Provider)
	}{
		{"ReadOnlyMounts", computeReadOnlyMounts},
		{"ReadOnlyMountsRefused", computeBadMounts},
	}
}

// mountSource is a host directory with SKILL.md that the sandbox user can
// read.
func mountSource(t *testing.T) string {
	t.Helper()
	dir := computetest.Dir(t)
	if err := os.Chmod(dir, 0o755); err != nil { // #nosec G302 -- the sandbox user reads it
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("# Demo\n"), 0o644); err != nil { // #nosec G306
		t.Fatal(err)
	}
	return dir
}

func computeReadOnlyMounts(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	src := mountSource(t)
	const skill = "/skills/demo@1.0.0"
	sb, err := p.Open(ctx, compute.Spec{Key: newKey("mounts"), SessionID: "s1", RunID: "r1",
		ReadOnlyMounts: []compute.ReadOnlyMount{{Source: src, Target: skill}, {Source: src, Target: "/opt/tools"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	for _, dir := range []string{skill, "/opt/tools"} {
		if data, _, err := sb.ReadFile(ctx, dir+"/SKILL.md", 0); err != nil || string(data) != "# Demo\n" {
			t.Errorf("ReadFile(%s/SKILL.md) = %q, %v", dir, data, err)
		}
		if files, err := sb.ListFiles(ctx, dir, 1); err != nil || len(files) != 1 {
			t.Errorf("ListFiles(%s) = %+v, %v", dir, files, err)
		}
		if err := sb.WriteFile(ctx, dir+"/new.md", []byte("x")); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("WriteFile into %s = %v, want fs.ErrPermission", dir, err)
		}
	}
	if pwd := mustExec(t, sb, compute.ExecRequest{Command: "pwd"}); pwd != sb.Paths().Workspace+"\n" {
		return // commands at host paths: nothing more to check
	}
	out := mustExec(t, sb, compute.ExecRequest{Command: "cat " + skill + "/SKILL.md; " +
		"if (echo x > " + skill + "/SKILL.md) 2>/dev/null || touch " + skill + "/new 2>/dev/null; then echo WRITABLE; fi"})
	if out != "# Demo\n" {
		t.Errorf("a command read the mount and wrote it: %q", out)
	}
	if data, err := os.ReadFile(filepath.Join(src, "SKILL.md")); err != nil || string(data) != "# Demo\n" {
		t.Errorf("the host directory changed: %q %v", data, err)
	}
}

func computeBadMounts(t *testing.T, p compute.Provider) {
	ctx := testCtx(t)
	src := mountSource(t)
	for _, m := range []compute.ReadOnlyMount{
		{Source: src, Target: "/workspace/skills"}, {Source: src, Target: "/usr/local"}, {Source: src, Target: "/"},
		{Source: src, Target: "/skills"}, {Source: src, Target: "/skills/a/b"}, {Source: "relative", Target: "/opt/x"},
		{Source: filepath.Join(src, "SKILL.md"), Target: "/opt/file"},
	} {
		sb, err := p.Open(ctx, compute.Spec{Key: newKey("badmounts"), RunID: "r1", ReadOnlyMounts: []compute.ReadOnlyMount{m}})
		if err == nil {
			_ = sb.Close()
			t.Errorf("Open with a mount of %s at %s succeeded", m.Source, m.Target)
		} else if !errors.Is(err, compute.ErrBadMount) || strings.Contains(err.Error(), src) {
			t.Errorf("Open with a mount at %s: %v, want ErrBadMount without the host path", m.Target, err)
		}
	}
}
