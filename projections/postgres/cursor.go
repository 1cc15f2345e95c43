package postgres

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// plainText reports whether a decoded cursor field can reach Postgres: a
// crafted cursor may decode to invalid UTF-8 or NUL, which Postgres refuses
// as an encoding error.
func plainText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// keyCursor is the position after the last row of a page of items or
// approvals. Kind tells the listings apart, so that a cursor of one is
// refused by the other.
type keyCursor struct {
	Kind   string `json:"k"`
	Seq    int64  `json:"s,omitempty"` // items: started_seq
	Micros int64  `json:"t,omitempty"` // approvals: requested_at, Unix microseconds
	RunID  string `json:"r,omitempty"`
	ItemID string `json:"i,omitempty"`
}

// Cursor kinds.
const (
	itemCursorKind     = "item"
	approvalCursorKind = "approval"
)

func (c keyCursor) encode() string {
	return base64.RawURLEncoding.EncodeToString(mustJSON(c))
}

// decodeKeyCursor decodes a cursor of kind, or fails with ErrInvalidCursor.
func decodeKeyCursor(s, kind string) (keyCursor, error) {
	var c keyCursor
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	valid := err == nil && c.Kind == kind && plainText(c.RunID) && plainText(c.ItemID)
	switch kind {
	case itemCursorKind:
		valid = valid && c.Seq > 0
	case approvalCursorKind:
		valid = valid && c.RunID != "" && c.ItemID != ""
	}
	if !valid {
		return keyCursor{}, ErrInvalidCursor
	}
	return c, nil
}
