package wire

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// sessionPrefix starts every session id the gateway makes, so the outbound
// side recognizes the conversations that are its own.
const sessionPrefix = "im"

// sessionIDPattern is the API's rule for a platformSessionId.
var sessionIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// ErrSessionIDTooLong reports a conversation whose session id would not fit
// the session id pattern's 160 characters.
var ErrSessionIDTooLong = errors.New("conversation id too long for a platformSessionId")

// Conversation names a chat: the endpoint it came through, its type and id.
type Conversation struct {
	Endpoint string
	Type     string
	ID       string
}

// SessionID returns the conversation's platformSessionId,
// "im:<endpoint>:<type>:<id>", each part escaped (escape) so that ':' only
// separates and every id maps to a valid, distinct session id.
func SessionID(c Conversation) (string, error) {
	s := strings.Join([]string{sessionPrefix, escape(c.Endpoint), c.Type, escape(c.ID)}, ":")
	if !sessionIDPattern.MatchString(s) {
		return "", fmt.Errorf("conversation %s/%s: %w", c.Type, c.Endpoint, ErrSessionIDTooLong)
	}
	return s, nil
}

// ParseSessionID recovers the conversation of a session id SessionID made;
// false for any other id.
func ParseSessionID(s string) (Conversation, bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 || parts[0] != sessionPrefix || normalType(parts[2]) != parts[2] {
		return Conversation{}, false
	}
	ep, ok1 := unescape(parts[1])
	id, ok2 := unescape(parts[3])
	if !ok1 || !ok2 || ep == "" || id == "" {
		return Conversation{}, false
	}
	return Conversation{Endpoint: ep, Type: parts[2], ID: id}, true
}

// escape keeps [A-Za-z0-9_-] and writes every other byte as '.' and two
// lowercase hex digits: '.' and ':' included, so the result splits on ':'
// and reads back unambiguously.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, ".%02x", c)
	}
	return b.String()
}

// unescape inverts escape; false on a malformed escape.
func unescape(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '.' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}
