package postgres

import (
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// PostgreSQL text cannot hold the NUL character, and jsonb rejects the
// escape \u0000. A NUL is valid UTF-8 and may reach an event (user input, a
// cancel reason), so read-model columns carry U+FFFD in its place; the
// envelope in run_events keeps the original.

// clean returns s with every NUL replaced by U+FFFD.
func clean(s string) string {
	if strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// cleanIdentity cleans the envelope fields that become text columns, so
// that every statement of a batch sees the same ids.
func cleanIdentity(e events.Envelope) events.Envelope {
	e.RunID, e.EventID, e.TenantID = clean(e.RunID), clean(e.EventID), clean(e.TenantID)
	e.PlatformSessionID, e.ItemID, e.CommandID = clean(e.PlatformSessionID), clean(e.ItemID), clean(e.CommandID)
	e.Type = events.Type(clean(string(e.Type)))
	return e
}

func cleanSandboxKey(k events.SandboxKey) events.SandboxKey {
	return events.SandboxKey{
		TenantID:    clean(k.TenantID),
		WorkspaceID: clean(k.WorkspaceID),
		AgentID:     clean(k.AgentID),
		OwnerID:     clean(k.OwnerID),
	}
}

func cleanMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[clean(k)] = clean(v)
	}
	return out
}
