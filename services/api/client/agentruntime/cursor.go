package agentruntime

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Cursor is a position in a conversation's events. Generation names the
// conversation's log (xbot keeps one per session for good, so it never
// changes); Position is this package's own state, which a platform stores
// as JSON and never reads. Two readers given the same cursor get the same
// events after it.
type Cursor struct {
	Generation string          `json:"generation"`
	Position   json.RawMessage `json:"position"`
}

// ErrCursorExpired says events cannot continue from a cursor: it belongs to
// another conversation, this package did not issue it, or the server no
// longer knows its position. The reader falls back to State.
var ErrCursorExpired = errors.New("agentruntime: cursor expired")

// position is what a Cursor's Position holds: the session stream's chunk
// id to read after (the last chunk of an event's chunks), how many of the
// events mapped from the next event's chunks were already yielded, and the
// mapping state as of After.
type position struct {
	After string `json:"after"`
	Skip  int    `json:"skip,omitempty"`
	mapState
}

// mapState is what the mapping needs to know of the chunks before a
// position: the reply open there ("" when none) and the input ids it has
// reported admitted.
type mapState struct {
	Response string   `json:"response,omitempty"`
	Inputs   []string `json:"inputs,omitempty"`
}

func (s mapState) clone() mapState {
	s.Inputs = slices.Clone(s.Inputs)
	return s
}

// generationOf is the generation of a session's cursors.
func generationOf(sessionID string) string { return "xbot/session/" + sessionID }

func (c *Client) cursor(p position) Cursor {
	raw, err := json.Marshal(p)
	if err != nil {
		panic("agentruntime: encode a position: " + err.Error()) // plain strings and ints
	}
	return Cursor{Generation: generationOf(c.cfg.SessionID), Position: raw}
}

// parse reads a cursor this client issued.
func (c *Client) parse(cur Cursor) (position, error) {
	if cur.Generation != generationOf(c.cfg.SessionID) {
		return position{}, fmt.Errorf("%w: generation %q is not session %s's", ErrCursorExpired, cur.Generation, c.cfg.SessionID)
	}
	var p position
	if err := json.Unmarshal(cur.Position, &p); err != nil || p.After == "" || p.Skip < 0 {
		return position{}, fmt.Errorf("%w: position %s is not one this client issued", ErrCursorExpired, cur.Position)
	}
	return p, nil
}
