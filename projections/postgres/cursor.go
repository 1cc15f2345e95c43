package postgres

import (
	"encoding/base64"
	"encoding/json"
)

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
	valid := err == nil && c.Kind == kind
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
