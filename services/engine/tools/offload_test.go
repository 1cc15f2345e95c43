package tools_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// numbered is n lines of about 16 bytes, with a multi-byte character in each.
func numbered(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %06d — é\n", i)
	}
	return b.String()
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestOffloadStoresFullOutput(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	out := numbered(100 << 10 / 19)
	const threshold = 8 << 10
	res := tools.Result{Output: out}
	if err := tools.Offload(context.Background(), sb, "call_1", &res, threshold); err != nil {
		t.Fatal(err)
	}
	ref := res.OutputRef
	want := events.OutputRef{Path: sb.Paths().Output + "/tool-outputs/call_1.txt", Bytes: int64(len(out)), SHA256: sha(out)}
	if ref == nil || *ref != want || ref.Path != tools.OffloadPath(sb.Paths(), "call_1") {
		t.Fatalf("OutputRef = %+v, want %+v", ref, want)
	}
	if stored := read(t, sb, ref.Path); stored != out {
		t.Fatalf("stored %d bytes differ from the %d-byte output", len(stored), len(out))
	}
	p := res.Output
	if len(p) > threshold || !utf8.ValidString(p) {
		t.Fatalf("preview is %d bytes (valid UTF-8: %v), threshold %d", len(p), utf8.ValidString(p), threshold)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, w := range []string{lines[0] + "\n", lines[len(lines)-1] + "\n", "bytes omitted", ref.Path, ref.SHA256,
		fmt.Sprintf("(%d bytes,", len(out)), `read_file_part {"path": "` + ref.Path + `", "offset": 0, "length": 16384}`} {
		if !strings.Contains(p, w) {
			t.Errorf("preview lacks %q:\n%s", w, p)
		}
	}
	if !strings.HasPrefix(p, lines[0]+"\n") || len(p) < threshold/3 {
		t.Errorf("preview should start with the head and use the room it has (%d bytes):\n%s", len(p), p)
	}
	// The note's instruction works as written.
	part := call(context.Background(), t, tools.Builtin(tools.Options{}), sb, tools.ReadFilePartName,
		map[string]any{"path": ref.Path, "offset": 0, "length": 16384})
	wantCompleted(t, part)
	if !strings.HasPrefix(part.Output, "bytes 0-16383 of "+fmt.Sprint(len(out))+" (sha256 "+ref.SHA256+")") {
		t.Errorf("read_file_part header: %.120q", part.Output)
	}
}

func TestOffloadLeavesSmallOutputs(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	big := numbered(1000)
	cases := []struct {
		out       string
		threshold int
	}{{"short", 100}, {strings.Repeat("x", 100), 100}, {big, 0}, {big, -1}}
	for i, tc := range cases {
		res := tools.Result{Output: tc.out, Exec: &events.ExecData{Stdout: tc.out}}
		if err := tools.Offload(context.Background(), sb, fmt.Sprintf("c%d", i), &res, tc.threshold); err != nil {
			t.Fatal(err)
		}
		tools.TruncateOutput(&res, tc.threshold)
		if res.Output != tc.out || res.OutputRef != nil || res.Exec.Stdout != tc.out || res.Exec.Truncated {
			t.Errorf("case %d: result changed: ref %+v, %d bytes", i, res.OutputRef, len(res.Output))
		}
	}
	entries, err := sb.ListFiles(context.Background(), sb.Paths().Output, 2)
	if err != nil || len(entries) != 0 {
		t.Errorf("output directory holds %v (%v)", entries, err)
	}
}

func TestOffloadShellResult(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	res, _ := runShell(context.Background(), t, tools.Builtin(tools.Options{}), sb,
		map[string]any{"command": "seq 1 30000; echo done >&2"})
	wantCompleted(t, res)
	full, exec := res.Output, res.Exec
	const threshold = 4096
	if err := tools.Offload(context.Background(), sb, "itm_shell", &res, threshold); err != nil {
		t.Fatal(err)
	}
	if got := read(t, sb, res.OutputRef.Path); got != full || !strings.Contains(got, "\n29999\n30000\n") {
		t.Fatalf("stored output differs from the result's Output (%d vs %d bytes)", len(got), len(full))
	}
	x := res.Exec
	if x == exec || exec.Truncated || len(exec.Stdout) < 100000 {
		t.Errorf("Offload changed the tool's ExecData instead of a copy: %d bytes", len(exec.Stdout))
	}
	if len(x.Stdout) > threshold/2 || !x.Truncated || !strings.HasPrefix(x.Stdout, "1\n2\n") ||
		!strings.HasSuffix(x.Stdout, "\n30000\n") || !strings.Contains(x.Stdout, "bytes omitted") {
		t.Errorf("Exec.Stdout (%d bytes, truncated %v):\n%s", len(x.Stdout), x.Truncated, x.Stdout)
	}
	if x.Stderr != "done\n" || x.Command != exec.Command || x.ExitCode != 0 {
		t.Errorf("Exec = %+v", x)
	}
	if len(res.Output) > threshold || !strings.HasPrefix(res.Output, "exit code: 0\nstdout:\n1\n") ||
		!strings.Contains(res.Output, "stderr:\ndone\n") {
		t.Errorf("Output (%d bytes):\n%s", len(res.Output), res.Output)
	}
}

func TestOffloadPathIsSafe(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	dir := sb.Paths().Output + "/tool-outputs"
	seen := map[string]string{}
	for _, id := range []string{"../../escape/x y", "a/b", "a_b", "", "é", strings.Repeat("z", 300)} {
		res := tools.Result{Output: numbered(100)}
		if err := tools.Offload(context.Background(), sb, id, &res, 500); err != nil {
			t.Fatalf("id %q: %v", id, err)
		}
		p := res.OutputRef.Path
		if path.Dir(p) != dir || len(path.Base(p)) > 120 {
			t.Errorf("id %q stored at %s", id, p)
		}
		if other, dup := seen[p]; dup {
			t.Errorf("ids %q and %q share %s", id, other, p)
		}
		seen[p] = id
		if read(t, sb, p) != numbered(100) {
			t.Errorf("id %q: stored content differs", id)
		}
	}
}

func TestOffloadWriteFailureThenTruncate(t *testing.T) {
	t.Parallel()
	injected := errors.New("disk full")
	sb := &faulty{Sandbox: openSandbox(t), writeErr: injected}
	out := numbered(2000)
	res := tools.Result{Output: out, Exec: &events.ExecData{Stdout: out}}
	err := tools.Offload(context.Background(), sb, "c1", &res, 1000)
	if !errors.Is(err, injected) || res.Output != out || res.OutputRef != nil || res.Exec.Truncated {
		t.Fatalf("Offload = %v, result changed: %v", err, res.Output != out)
	}
	tools.TruncateOutput(&res, 1000)
	first := strings.SplitAfter(out, "\n")[0]
	if len(res.Output) > 1000 || !strings.HasPrefix(res.Output, first) ||
		!strings.Contains(res.Output, "line 001999 — é\n[output truncated: ") || res.OutputRef != nil {
		t.Errorf("Output (%d bytes):\n%s", len(res.Output), res.Output)
	}
	if len(res.Exec.Stdout) > 500 || !res.Exec.Truncated {
		t.Errorf("Exec.Stdout is %d bytes, truncated %v", len(res.Exec.Stdout), res.Exec.Truncated)
	}
}

// Whatever the threshold and the shape of the output, the preview fits and
// stays valid UTF-8.
func TestPreviewFitsThreshold(t *testing.T) {
	t.Parallel()
	sb := openSandbox(t)
	outputs := map[string]string{
		"lines":      numbered(3000),
		"one line":   strings.Repeat("€é", 20000),
		"newlines":   strings.Repeat("\n", 50000),
		"emoji tail": strings.Repeat("a", 4999) + strings.Repeat("😀", 3000),
	}
	for name, out := range outputs {
		for _, threshold := range []int{1, 7, 60, 200, 333, 1000, 4097, 10000} {
			res := tools.Result{Output: out, Exec: &events.ExecData{Stdout: out, Stderr: out}}
			if err := tools.Offload(context.Background(), sb, fmt.Sprintf("%s-%d", strings.ReplaceAll(name, " ", "_"), threshold), &res, threshold); err != nil {
				t.Fatal(err)
			}
			trunc := tools.Result{Output: out, Exec: &events.ExecData{Stdout: out}}
			tools.TruncateOutput(&trunc, threshold)
			for kind, s := range map[string]string{"offload": res.Output, "truncate": trunc.Output,
				"offload stdout": res.Exec.Stdout, "offload stderr": res.Exec.Stderr, "truncate stdout": trunc.Exec.Stdout} {
				limit := threshold
				if strings.HasSuffix(kind, "stdout") || strings.HasSuffix(kind, "stderr") {
					limit = threshold / 2
				}
				if len(s) > limit || !utf8.ValidString(s) {
					t.Errorf("%s, threshold %d: %s is %d bytes (valid UTF-8: %v)", name, threshold, kind, len(s), utf8.ValidString(s))
				}
			}
		}
	}
}
