package tools

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// The golden files testdata/diff/NAME.diff are GNU diff's output, made with
//
//	diff -u --label a/file --label b/file NAME.before NAME.after > NAME.diff
//
// so the expectations come from diffutils, not from this package.
func TestUnifiedDiffGolden(t *testing.T) {
	t.Parallel()
	olds, err := filepath.Glob("testdata/diff/*.before")
	if err != nil || len(olds) < 20 {
		t.Fatalf("golden cases: %v (%d found)", err, len(olds))
	}
	gnu := gnuDiff(t, false)
	for _, oldPath := range olds {
		name := strings.TrimSuffix(filepath.Base(oldPath), ".before")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			before, after, golden := readCase(t, name)
			if got := unifiedDiff("a/file", "b/file", before, after); got != golden {
				t.Errorf("diff differs from golden\n--- got\n%s--- want\n%s", got, golden)
			}
			if got := applyDiff(t, before, golden); got != after {
				t.Errorf("golden does not turn before into after: got %q", got)
			}
			if gnu != nil {
				if live := gnu(before, after); live != golden {
					t.Errorf("golden is stale; diff -u now says:\n%s", live)
				}
			}
		})
	}
}

func readCase(t *testing.T, name string) (before, after, diff string) {
	t.Helper()
	var out [3]string
	for i, ext := range []string{".before", ".after", ".diff"} {
		b, err := os.ReadFile(filepath.Join("testdata/diff", name+ext))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out[0], out[1], out[2]
}

func TestUnifiedDiffHeadersAndEmpty(t *testing.T) {
	t.Parallel()
	if d := unifiedDiff("a/x", "b/x", "same\n", "same\n"); d != "" {
		t.Errorf("equal inputs: %q", d)
	}
	if d := unifiedDiff("a/x", "b/x", "", ""); d != "" {
		t.Errorf("empty inputs: %q", d)
	}
	want := "--- /dev/null\n+++ b/dir/x\n@@ -0,0 +1 @@\n+after\n"
	if d := unifiedDiff("/dev/null", "b/dir/x", "", "after\n"); d != want {
		t.Errorf("created: %q, want %q", d, want)
	}
}

// Random edits of small-alphabet files are where diff algorithms disagree
// most (many equally short edit scripts); ours must pick GNU's every time.
func TestUnifiedDiffMatchesGNURandomly(t *testing.T) {
	t.Parallel()
	gnu := gnuDiff(t, true)
	r := rand.New(rand.NewPCG(2026, 4))
	for i := range 400 {
		before, after := randomPair(r, []int{8, 40, 300}[i%3])
		got := unifiedDiff("a/file", "b/file", before, after)
		if want := gnu(before, after); got != want {
			t.Fatalf("case %d differs from diff -u\nold=%q\nnew=%q\n--- ours\n%s--- diff -u\n%s", i, before, after, got, want)
		}
	}
}

// Without diffutils, every diff must at least apply and be minimal in size
// against an LCS computed independently.
func TestUnifiedDiffAppliesAndIsMinimal(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	for i := range 500 {
		before, after := randomPair(r, []int{5, 30, 120}[i%3])
		d := unifiedDiff("a/f", "b/f", before, after)
		if got := applyDiff(t, before, d); got != after {
			t.Fatalf("case %d: applying the diff gives %q, want %q\n%s", i, got, after, d)
		}
		a, b := splitLines(before), splitLines(after)
		added, removed, _ := diffStat(d)
		lcs := lcsLen(a, b)
		if added != len(b)-lcs || removed != len(a)-lcs {
			t.Fatalf("case %d: +%d -%d, minimal is +%d -%d\n%s", i, added, removed, len(b)-lcs, len(a)-lcs, d)
		}
	}
}

// A large, completely rewritten file must still diff quickly and correctly
// (the search gives up on minimality past tooExpensive steps).
func TestUnifiedDiffLargeRewrite(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	var a, b strings.Builder
	for range 4000 {
		a.WriteString(strconv.Itoa(r.IntN(50)) + "\n")
		b.WriteString(strconv.Itoa(r.IntN(50)) + "\n")
	}
	d := unifiedDiff("a/f", "b/f", a.String(), b.String())
	if got := applyDiff(t, a.String(), d); got != b.String() {
		t.Fatal("large diff does not apply")
	}
}

func randomPair(r *rand.Rand, maxLines int) (string, string) {
	alpha := []int{2, 3, 5, 20}[r.IntN(4)]
	line := func() string {
		if r.IntN(4) == 0 {
			return "}\n"
		}
		return string(rune('a'+r.IntN(alpha))) + "\n"
	}
	var lines []string
	for range r.IntN(maxLines + 1) {
		lines = append(lines, line())
	}
	edited := append([]string(nil), lines...)
	for range 1 + r.IntN(1+maxLines/6) {
		if k := len(edited); k > 0 && r.IntN(2) == 0 {
			i := r.IntN(k)
			edited = append(edited[:i], edited[i+1:]...)
		} else {
			i := r.IntN(k + 1)
			edited = append(edited[:i], append([]string{line()}, edited[i:]...)...)
		}
	}
	before, after := strings.Join(lines, ""), strings.Join(edited, "")
	if r.IntN(4) == 0 {
		before = strings.TrimSuffix(before, "\n")
	}
	if r.IntN(4) == 0 {
		after = strings.TrimSuffix(after, "\n")
	}
	return before, after
}

// gnuDiff returns a function running `diff -u` on two texts, or nil (or a
// skip, when required) if diff is not installed.
func gnuDiff(t *testing.T, required bool) func(before, after string) string {
	t.Helper()
	bin, err := exec.LookPath("diff")
	if err != nil {
		if required {
			t.Skip("diff is not installed")
		}
		return nil
	}
	dir := t.TempDir()
	var n atomic.Int64 // parallel subtests share the function
	return func(before, after string) string {
		i := n.Add(1)
		a, b := filepath.Join(dir, fmt.Sprint(i, ".a")), filepath.Join(dir, fmt.Sprint(i, ".b"))
		if os.WriteFile(a, []byte(before), 0o600) != nil || os.WriteFile(b, []byte(after), 0o600) != nil {
			t.Fatal("write diff inputs")
		}
		out, err := exec.Command(bin, "-u", "--label", "a/file", "--label", "b/file", a, b).Output()
		var exit *exec.ExitError
		differ := errors.As(err, &exit) && exit.ExitCode() == 1 // diff exits 1 when the files differ
		if err != nil && !differ {
			t.Fatalf("diff: %v", err)
		}
		return string(out)
	}
}

// applyDiff applies a unified diff to before, checking every context and
// removed line against it.
func applyDiff(t *testing.T, before, diff string) string {
	t.Helper()
	if diff == "" {
		return before
	}
	src, lines := splitLines(before), splitLines(diff)
	var out []string
	at := 0
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "@@ ") {
			var start int
			fmt.Sscanf(l, "@@ -%d", &start)
			start = max(start-1, 0)
			if strings.HasPrefix(l, fmt.Sprintf("@@ -%d,0 ", start+1)) {
				start++ // an empty range names the line before it
			}
			out, at = append(out, src[at:start]...), start
			continue
		}
		text := l[1:]
		if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
			text = strings.TrimSuffix(text, "\n")
			i++
		}
		switch l[0] {
		case ' ', '-':
			if at >= len(src) || src[at] != text {
				t.Fatalf("diff line %d %q does not match before line %d", i+1, l, at+1)
			}
			if l[0] == ' ' {
				out = append(out, text)
			}
			at++
		case '+':
			out = append(out, text)
		default:
			t.Fatalf("bad diff line %q", l)
		}
	}
	return strings.Join(append(out, src[at:]...), "")
}

func lcsLen(a, b []string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
