package tools

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change, as
// `diff -u` does by default.
const diffContext = 3

// unifiedDiff returns the unified diff turning before into after, with
// fromName and toName in the --- and +++ headers; "" when they are equal. Hunks,
// ranges and the "\ No newline at end of file" marker are those of GNU
// `diff -u --label fromName --label toName`.
func unifiedDiff(fromName, toName, before, after string) string {
	a, b := splitLines(before), splitLines(after)
	ia, ib, classes := classify(a, b)
	ca, cb := changedLines(ia, ib, classes)
	hunks := groupHunks(changeBlocks(ca, cb, len(a), len(b)))
	if len(hunks) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("--- " + fromName + "\n+++ " + toName + "\n")
	for _, h := range hunks {
		writeHunk(&sb, h, a, b)
	}
	return sb.String()
}

// splitLines splits s into lines that keep their "\n"; a last line without
// one differs from the same text with one, as in diff.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// classify numbers the distinct lines of a and b from 1.
func classify(a, b []string) (ia, ib []int, classes int) {
	ids := make(map[string]int, len(a)+len(b))
	number := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids) + 1
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ia, ib = number(a), number(b)
	return ia, ib, len(ids)
}

// block is one change: lines a0..a1 of old replaced by lines b0..b1 of new
// (0-based, half-open).
type block struct{ a0, a1, b0, b1 int }

// changeBlocks walks both files together and collects the changes.
func changeBlocks(ca, cb []bool, na, nb int) []block {
	var out []block
	for i, j := 0, 0; i < na || j < nb; {
		delA, addB := i < na && ca[i+1], j < nb && cb[j+1]
		if !delA && !addB {
			i, j = i+1, j+1
			continue
		}
		c := block{a0: i, b0: j}
		for i < na && ca[i+1] {
			i++
		}
		for j < nb && cb[j+1] {
			j++
		}
		c.a1, c.b1 = i, j
		out = append(out, c)
	}
	return out
}

// hunk is a run of changes close enough to share context.
type hunk struct {
	blocks []block
	pre    int // context lines before the first block
}

// groupHunks puts changes separated by at most 2*diffContext unchanged lines
// into one hunk.
func groupHunks(blocks []block) []hunk {
	var out []hunk
	for k, c := range blocks {
		if k > 0 && c.a0-blocks[k-1].a1 <= 2*diffContext {
			out[len(out)-1].blocks = append(out[len(out)-1].blocks, c)
			continue
		}
		out = append(out, hunk{blocks: []block{c}})
	}
	for k := range out {
		first := out[k].blocks[0]
		out[k].pre = min(diffContext, first.a0)
		if k > 0 {
			prev := out[k-1].blocks[len(out[k-1].blocks)-1]
			out[k].pre = min(diffContext, first.a0-prev.a1)
		}
	}
	return out
}

func writeHunk(sb *strings.Builder, h hunk, a, b []string) {
	first, last := h.blocks[0], h.blocks[len(h.blocks)-1]
	post := min(diffContext, len(a)-last.a1)
	aStart, bStart := first.a0-h.pre, first.b0-h.pre
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(aStart, last.a1+post-aStart), hunkRange(bStart, last.b1+post-bStart))
	at := aStart
	for _, c := range h.blocks {
		writeLines(sb, ' ', a[at:c.a0])
		writeLines(sb, '-', a[c.a0:c.a1])
		writeLines(sb, '+', b[c.b0:c.b1])
		at = c.a1
	}
	writeLines(sb, ' ', a[at:last.a1+post])
}

// hunkRange formats a 0-based start and a count as diff does: "l,n" with l
// 1-based, "l" alone when n is 1, and the line before the range when n is 0.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	default:
		return fmt.Sprintf("%d,%d", start+1, count)
	}
}

func writeLines(sb *strings.Builder, prefix byte, lines []string) {
	for _, l := range lines {
		sb.WriteByte(prefix)
		sb.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}
