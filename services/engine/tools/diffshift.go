package tools

// discards decides which lines of seq take no part in the search (GNU
// diff's discard_confusing_lines): a line with no equal in other cannot
// match, and a line with very many equals is discarded too when it sits
// inside a run of such lines. It returns 0 (keep) or 1 (discard) per line.
func discards(seq, other []int, classes int) []byte {
	counts := make([]int, classes+1)
	for _, v := range other {
		counts[v]++
	}
	many := 5
	for tem := len(seq) / 64; ; {
		if tem >>= 2; tem <= 0 {
			break
		}
		many *= 2
	}
	disc := make([]byte, len(seq))
	for i, v := range seq {
		switch n := counts[v]; {
		case n == 0:
			disc[i] = 1
		case n > many:
			disc[i] = 2 // provisional
		}
	}
	for i := 0; i < len(disc); i++ {
		switch disc[i] {
		case 2:
			disc[i] = 0
		case 1:
			i = settleRun(disc, i)
		}
	}
	return disc
}

// settleRun decides the provisional discards of the run of discardable lines
// starting at i, whose first line is a definite discard, and returns the
// index of the run's last line.
func settleRun(disc []byte, i int) int {
	j, provisional := i, 0
	for ; j < len(disc) && disc[j] != 0; j++ {
		if disc[j] == 2 {
			provisional++
		}
	}
	for j > i && disc[j-1] == 2 {
		j--
		disc[j] = 0
		provisional--
	}
	length := j - i
	if provisional*4 > length {
		for k := i; k < j; k++ {
			if disc[k] == 2 {
				disc[k] = 0
			}
		}
		return j - 1
	}
	cancelSubruns(disc, i, length)
	settleEnd(disc, i, length, 1)
	settleEnd(disc, i+length-1, length, -1)
	return i + length - 1
}

// cancelSubruns cancels every subrun of provisional discards in the run at
// i that is at least about sqrt(length/4) long.
func cancelSubruns(disc []byte, i, length int) {
	minimum := 1
	for tem := length >> 2; ; minimum <<= 1 {
		if tem >>= 2; tem <= 0 {
			break
		}
	}
	minimum++
	consec := 0
	for k := 0; k < length; k++ {
		switch {
		case disc[i+k] != 2:
			consec = 0
		case minimum == consec+1:
			consec++
			k -= consec // back up to cancel the whole subrun
		case minimum < consec+1:
			consec++
			disc[i+k] = 0
		default:
			consec++
		}
	}
}

// settleEnd cancels provisional discards from one end of a run (step 1 from
// the start, -1 from the end) until three definite discards in a row, or a
// definite one at least 8 lines in.
func settleEnd(disc []byte, from, length, step int) {
	consec := 0
	for k := 0; k < length; k++ {
		p := from + k*step
		if k >= 8 && disc[p] == 1 {
			return
		}
		switch disc[p] {
		case 2:
			consec = 0
			disc[p] = 0
		case 0:
			consec = 0
		default:
			consec++
		}
		if consec == 3 {
			return
		}
	}
}

// shiftBoundaries slides each run of changed lines of one file (GNU diff's
// shift_boundaries): back while that merges it with an earlier run, then
// forward as far as equal lines allow, then back again to line up with a
// run of changes in the other file if one was passed. ch and oth are the
// changed flags of this file and the other, index i+1 for line i.
func shiftBoundaries(eq []int, ch, oth []bool) {
	s := &shifter{eq: eq, ch: ch, oth: oth, end: len(eq)}
	for s.nextRun() {
		corresponding := s.slide()
		for corresponding < s.i {
			s.moveBack()
		}
	}
}

// shifter walks one file's runs of changes [start, i), keeping j at the
// corresponding position of the other file.
type shifter struct {
	eq          []int
	ch, oth     []bool
	i, j, start int
	end         int
}

func (s *shifter) changed(i int) bool      { return s.ch[i+1] }
func (s *shifter) otherChanged(j int) bool { return s.oth[j+1] }

// nextRun moves to the next run of changes; false at the end of the file.
func (s *shifter) nextRun() bool {
	for s.i < s.end && !s.changed(s.i) {
		for s.otherChanged(s.j) {
			s.j++
		}
		s.i, s.j = s.i+1, s.j+1
	}
	if s.i == s.end {
		return false
	}
	s.start = s.i
	for s.i++; s.changed(s.i); s.i++ {
		continue
	}
	for s.otherChanged(s.j) {
		s.j++
	}
	return true
}

// slide merges the run with neighbouring runs as far as equal lines allow,
// ending as far forward as possible, and returns the end the run had where
// it last lined up with changes in the other file (s.end if never).
func (s *shifter) slide() int {
	for {
		runlength := s.i - s.start
		for s.start > 0 && s.eq[s.start-1] == s.eq[s.i-1] {
			s.moveBack()
			for s.changed(s.start - 1) {
				s.start--
			}
		}
		corresponding := s.end
		if s.otherChanged(s.j - 1) {
			corresponding = s.i
		}
		for s.i != s.end && s.eq[s.start] == s.eq[s.i] {
			s.ch[s.start+1], s.ch[s.i+1] = false, true
			s.start, s.i = s.start+1, s.i+1
			for s.changed(s.i) {
				s.i++
			}
			for s.j++; s.otherChanged(s.j); s.j++ {
				corresponding = s.i
			}
		}
		if runlength == s.i-s.start {
			return corresponding
		}
	}
}

// moveBack shifts the run back by one line.
func (s *shifter) moveBack() {
	s.start, s.i = s.start-1, s.i-1
	s.ch[s.start+1], s.ch[s.i+1] = true, false
	s.j--
	for s.otherChanged(s.j) {
		s.j--
	}
}
