package tools

import "math"

// The line matcher follows GNU diff (analyze.c and gnulib's diffseq.h): lines
// that cannot match are discarded first, then the divide-and-conquer search
// of Myers' "An O(ND) Difference Algorithm and Its Variations" finds a
// shortest edit script in linear space, and change groups are finally slid
// to where GNU puts them. Doing it the same way makes our hunks read like
// `diff -u` output, not merely be equivalent to it.

// tooExpensive bounds the edit steps of one middle-snake search. Past it the
// search settles for the best split found so far: the diff stays correct but
// may not be minimal, and time stays near O((N+M)·1024) for any input.
const tooExpensive = 1024

// matcher finds the changed lines of two sequences of equivalence classes.
type matcher struct {
	xv, yv []int  // classes of the lines taking part in the search
	xr, yr []int  // their indexes in the full sequences
	ca, cb []bool // changed flags, index i+1 for line i (0 and n+1 are sentinels)
	fd, bd []int  // forward and backward furthest x per diagonal, offset by off
	off    int
}

// changedLines returns, for sequences a and b of equivalence classes (ids
// >= 1), which lines of each are not part of the common subsequence. Index
// i+1 holds line i; the first and last entries are false sentinels.
//
// Like GNU diff, it sets aside the common prefix and suffix except for
// diffContext lines of each, which still count when lines are discarded and
// runs of changes are slid.
func changedLines(a, b []int, classes int) (ca, cb []bool) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	p, s = p-min(p, diffContext), s-min(s, diffContext)
	ma, mb := changedMiddle(a[p:len(a)-s], b[p:len(b)-s], classes)
	ca, cb = make([]bool, len(a)+2), make([]bool, len(b)+2)
	copy(ca[p+1:], ma[1:len(ma)-1])
	copy(cb[p+1:], mb[1:len(mb)-1])
	return ca, cb
}

// changedMiddle is changedLines on the part of the files that is searched.
func changedMiddle(a, b []int, classes int) (ca, cb []bool) {
	m := &matcher{ca: make([]bool, len(a)+2), cb: make([]bool, len(b)+2)}
	m.xv, m.xr = m.undiscarded(a, discards(a, b, classes), m.ca)
	m.yv, m.yr = m.undiscarded(b, discards(b, a, classes), m.cb)
	m.off = len(m.yv) + 1
	m.fd = make([]int, len(m.xv)+len(m.yv)+3)
	m.bd = make([]int, len(m.xv)+len(m.yv)+3)
	m.compare(0, len(m.xv), 0, len(m.yv), false)
	shiftBoundaries(a, m.ca, m.cb)
	shiftBoundaries(b, m.cb, m.ca)
	return m.ca, m.cb
}

// undiscarded keeps the lines not discarded and marks the others changed.
func (m *matcher) undiscarded(seq []int, disc []byte, changed []bool) (vals, idx []int) {
	for i, v := range seq {
		if disc[i] == 0 {
			vals = append(vals, v)
			idx = append(idx, i)
		} else {
			changed[i+1] = true
		}
	}
	return vals, idx
}

// compare marks the changes between xv[xoff:xlim] and yv[yoff:ylim].
func (m *matcher) compare(xoff, xlim, yoff, ylim int, minimal bool) {
	for xoff < xlim && yoff < ylim && m.xv[xoff] == m.yv[yoff] {
		xoff, yoff = xoff+1, yoff+1
	}
	for xoff < xlim && yoff < ylim && m.xv[xlim-1] == m.yv[ylim-1] {
		xlim, ylim = xlim-1, ylim-1
	}
	switch {
	case xoff == xlim:
		for ; yoff < ylim; yoff++ {
			m.cb[m.yr[yoff]+1] = true
		}
	case yoff == ylim:
		for ; xoff < xlim; xoff++ {
			m.ca[m.xr[xoff]+1] = true
		}
	default:
		p := m.diag(xoff, xlim, yoff, ylim, minimal)
		m.compare(xoff, p.xmid, yoff, p.ymid, p.loMinimal)
		m.compare(p.xmid, xlim, p.ymid, ylim, p.hiMinimal)
	}
}

// partition is a point on a shortest edit path splitting the problem in two.
type partition struct {
	xmid, ymid           int
	loMinimal, hiMinimal bool
}

// search is the state of one middle-snake search: the bounds of the
// problem and of the diagonals reached forward and backward.
type search struct {
	xoff, xlim, yoff, ylim int
	dmin, dmax             int
	fmin, fmax, bmin, bmax int
	odd                    bool
}

// diag finds the middle snake of xv[xoff:xlim] and yv[yoff:ylim], searching
// forward from the start and backward from the end until the paths overlap.
func (m *matcher) diag(xoff, xlim, yoff, ylim int, minimal bool) partition {
	fmid, bmid := xoff-yoff, xlim-ylim
	s := &search{xoff: xoff, xlim: xlim, yoff: yoff, ylim: ylim, dmin: xoff - ylim, dmax: xlim - yoff,
		fmin: fmid, fmax: fmid, bmin: bmid, bmax: bmid, odd: (fmid-bmid)&1 != 0}
	m.fd[m.off+fmid], m.bd[m.off+bmid] = xoff, xlim
	for c := 1; ; c++ {
		if p, ok := m.forward(s); ok {
			return p
		}
		if p, ok := m.backward(s); ok {
			return p
		}
		if !minimal && c >= tooExpensive {
			return m.bestSplit(s)
		}
	}
}

// forward extends the forward search by one edit step; ok when it met the
// backward search.
func (m *matcher) forward(s *search) (partition, bool) {
	fd, o := m.fd, m.off
	s.fmin, s.fmax = widen(fd, o, s.fmin, s.fmax, s.dmin, s.dmax, -1)
	for d := s.fmax; d >= s.fmin; d -= 2 {
		x := fd[o+d-1] + 1
		if fd[o+d-1] < fd[o+d+1] {
			x = fd[o+d+1]
		}
		y := x - d
		for x < s.xlim && y < s.ylim && m.xv[x] == m.yv[y] {
			x, y = x+1, y+1
		}
		fd[o+d] = x
		if s.odd && s.bmin <= d && d <= s.bmax && m.bd[o+d] <= x {
			return partition{x, y, true, true}, true
		}
	}
	return partition{}, false
}

// backward extends the backward search by one edit step; ok when it met
// the forward search.
func (m *matcher) backward(s *search) (partition, bool) {
	bd, o := m.bd, m.off
	s.bmin, s.bmax = widen(bd, o, s.bmin, s.bmax, s.dmin, s.dmax, math.MaxInt)
	for d := s.bmax; d >= s.bmin; d -= 2 {
		x := bd[o+d+1] - 1
		if bd[o+d-1] < bd[o+d+1] {
			x = bd[o+d-1]
		}
		y := x - d
		for s.xoff < x && s.yoff < y && m.xv[x-1] == m.yv[y-1] {
			x, y = x-1, y-1
		}
		bd[o+d] = x
		if !s.odd && s.fmin <= d && d <= s.fmax && x <= m.fd[o+d] {
			return partition{x, y, true, true}, true
		}
	}
	return partition{}, false
}

// widen extends a search by one edit step: each bound moves out by one
// diagonal (fencing the new outer neighbour with fence) or, at the edge of
// the problem, in by one.
func widen(v []int, o, lo, hi, dmin, dmax, fence int) (int, int) {
	if lo > dmin {
		lo--
		v[o+lo-1] = fence
	} else {
		lo++
	}
	if hi < dmax {
		hi++
		v[o+hi+1] = fence
	} else {
		hi--
	}
	return lo, hi
}

// bestSplit gives up on a minimal split: it takes the forward diagonal that
// got furthest or the backward one that did, whichever progressed more.
func (m *matcher) bestSplit(s *search) partition {
	fd, bd, o := m.fd, m.bd, m.off
	fxybest, fxbest := -1, 0
	for d := s.fmax; d >= s.fmin; d -= 2 {
		x := min(fd[o+d], s.xlim)
		y := x - d
		if s.ylim < y {
			x, y = s.ylim+d, s.ylim
		}
		if fxybest < x+y {
			fxybest, fxbest = x+y, x
		}
	}
	bxybest, bxbest := math.MaxInt, 0
	for d := s.bmax; d >= s.bmin; d -= 2 {
		x := max(s.xoff, bd[o+d])
		y := x - d
		if y < s.yoff {
			x, y = s.yoff+d, s.yoff
		}
		if x+y < bxybest {
			bxybest, bxbest = x+y, x
		}
	}
	if (s.xlim+s.ylim)-bxybest < fxybest-(s.xoff+s.yoff) {
		return partition{fxbest, fxybest - fxbest, true, false}
	}
	return partition{bxbest, bxybest - bxbest, false, true}
}
