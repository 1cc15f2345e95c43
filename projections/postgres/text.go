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
