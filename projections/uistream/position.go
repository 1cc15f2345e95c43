package uistream

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Position is a point in a run's chunk stream. An event can map to several
// chunks; the last chunk of event seq N has the SSE id "N", an earlier one,
// the i-th (from 0), has "N.i". Resuming after "N" sends what follows event
// N; after "N.i" it sends the rest of event N's chunks from i+1 on. So a
// client that lost its connection in the middle of an event's chunks gets
// exactly the ones it missed.
//
// The zero Position is before the first chunk.
type Position struct {
	Seq int64
	// Part is the index of the last chunk delivered of event Seq, or
	// AllParts when every chunk of it was.
	Part int
}

// AllParts is Position.Part for "every chunk of the event".
const AllParts = -1

// After returns the position after every chunk of event seq: what
// ?afterSeq=seq means.
func After(seq int64) Position { return Position{Seq: seq, Part: AllParts} }

// String is the SSE id of the chunk at p.
func (p Position) String() string {
	if p.Part == AllParts || p.Seq == 0 {
		return strconv.FormatInt(p.Seq, 10)
	}
	return strconv.FormatInt(p.Seq, 10) + "." + strconv.Itoa(p.Part)
}

// covers reports whether the chunk at index part of event seq was
// delivered by the time the stream reached p.
func (p Position) covers(seq int64, part int) bool {
	switch {
	case seq != p.Seq:
		return seq < p.Seq
	case p.Part == AllParts:
		return true
	}
	return part <= p.Part
}

// ErrBadCursor is returned for a Last-Event-ID or cursor this package did
// not issue.
var ErrBadCursor = errors.New("not a stream position")

// ParsePosition parses a run stream's SSE id ("N" or "N.i").
func ParsePosition(s string) (Position, error) {
	seqText, partText, hasPart := strings.Cut(s, ".")
	seq, err := strconv.ParseInt(seqText, 10, 64)
	if err != nil || seq < 0 || strings.HasPrefix(seqText, "+") {
		return Position{}, fmt.Errorf("%w: %q", ErrBadCursor, s)
	}
	if !hasPart {
		return After(seq), nil
	}
	part, err := strconv.Atoi(partText)
	if err != nil || part < 0 || seq == 0 || strings.HasPrefix(partText, "+") {
		return Position{}, fmt.Errorf("%w: %q", ErrBadCursor, s)
	}
	return Position{Seq: seq, Part: part}, nil
}

// SessionPosition is a point in a session stream: a position in one of the
// session's runs. Its SSE id is "<runId>:<run position>", e.g.
// "run_01J…:12" or "run_01J…:12.1".
type SessionPosition struct {
	RunID string
	Pos   Position
}

// String is the SSE id of the chunk at p.
func (p SessionPosition) String() string { return p.RunID + ":" + p.Pos.String() }

// ParseSessionPosition parses a session stream's SSE id.
func ParseSessionPosition(s string) (SessionPosition, error) {
	run, pos, ok := strings.Cut(s, ":")
	if !ok || run == "" {
		return SessionPosition{}, fmt.Errorf("%w: %q", ErrBadCursor, s)
	}
	p, err := ParsePosition(pos)
	if err != nil {
		return SessionPosition{}, err
	}
	return SessionPosition{RunID: run, Pos: p}, nil
}
