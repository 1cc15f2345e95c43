package agentloop

import (
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// assertProviderValid checks the rules every chat-completions provider
// enforces: each tool call is answered by exactly one tool message right
// after its assistant message, no tool message answers an unknown call, and
// an assistant message is never empty.
func assertProviderValid(t *testing.T, msgs []model.Message) {
	t.Helper()
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case model.RoleTool:
			t.Errorf("message %d: tool result %s does not follow its call", i, m.ToolCallID)
		case model.RoleAssistant:
			if m.Content == "" && len(m.ToolCalls) == 0 {
				t.Errorf("message %d: empty assistant message", i)
			}
			for _, c := range m.ToolCalls {
				i++
				if i >= len(msgs) || msgs[i].Role != model.RoleTool || msgs[i].ToolCallID != c.ID {
					t.Errorf("tool call %s has no result right after its assistant message", c.ID)
					return
				}
			}
		}
	}
}
