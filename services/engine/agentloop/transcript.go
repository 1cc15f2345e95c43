package agentloop

import (
	"fmt"
	"sort"
	"strings"

	"github.com/xbot-runtime/xbot/services/engine/model"
)

// CompactionPrompt is the system prompt of a compaction call. The reply is
// read by ParseSummary, which tolerates prose and fences around the object.
const CompactionPrompt = `You compact the history of an AI agent's run so that the agent can continue with a shorter context.
The user message is a transcript of the conversation so far. Each entry starts a line with "user:", "assistant:", "tool call:" or "tool result (<tool>):"; indented lines continue the entry above, and "…[N bytes omitted]…" marks text cut for length.

Reply with ONLY a JSON object, without prose or code fences, of exactly this form:
{"userGoal": string, "executedDecisions": [string], "modifiedFiles": [string], "pendingTasks": [string]}

- userGoal: what the user ultimately wants, in one or two sentences, including later corrections.
- executedDecisions: the decisions taken and actions completed so far and their outcomes, oldest first, one short sentence each.
- modifiedFiles: the paths of files created, changed or deleted, exactly as written in the transcript.
- pendingTasks: what remains to be done, including failures not yet fixed and questions not yet answered.

Use only facts stated in the transcript: do not invent files, results or decisions. Keep file paths, names, commands and error messages exact. Use [] for an empty list.`

// Transcript labels. The scripted model reads "user: " and "tool call: "
// lines back (services/model/scripted), so they are part of its contract.
const (
	labelUser       = "user: "
	labelAssistant  = "assistant: "
	labelToolCall   = "tool call: "
	labelToolResult = "tool result (%s): "
	continuation    = "\n  "
)

// CompactionRequest builds the summarising call for msgs (a projected
// conversation): PurposeCompaction, no tools, the CompactionPrompt and a
// plain-text transcript of msgs as the user message. System messages are left
// out (the system prompt is sent again after the compaction anyway). The
// transcript is at most maxChars bytes: when msgs are longer, the longest
// entries are cut to their head and tail, all to the same length, so short
// entries (the user's words, most calls) stay whole. maxChars <= 0 means no
// bound.
func CompactionRequest(modelName string, msgs []model.Message, maxChars int) model.Request {
	return model.Request{
		Model:   modelName,
		Purpose: model.PurposeCompaction,
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: CompactionPrompt},
			{Role: model.RoleUser, Content: transcript(msgs, maxChars)},
		},
	}
}

type transcriptEntry struct{ label, body string }

func transcript(msgs []model.Message, maxChars int) string {
	var es []transcriptEntry
	names := map[string]string{} // tool call id → tool name
	for _, m := range msgs {
		switch m.Role {
		case model.RoleUser:
			es = append(es, transcriptEntry{labelUser, m.Content})
		case model.RoleAssistant:
			if m.Content != "" {
				es = append(es, transcriptEntry{labelAssistant, m.Content})
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				es = append(es, transcriptEntry{labelToolCall, c.Name + "(" + c.Arguments + ")"})
			}
		case model.RoleTool:
			es = append(es, transcriptEntry{fmt.Sprintf(labelToolResult, names[m.ToolCallID]), m.Content})
		default: // system
		}
	}
	for i := range es {
		es[i].body = strings.ReplaceAll(es[i].body, "\n", continuation)
	}
	limit := -1
	if maxChars > 0 {
		limit = bodyCap(es, maxChars)
	}
	var b strings.Builder
	for _, e := range es {
		b.WriteString(e.label)
		if limit >= 0 {
			b.WriteString(capText(e.body, limit))
		} else {
			b.WriteString(e.body)
		}
		b.WriteByte('\n')
	}
	if maxChars > 0 {
		return capText(b.String(), maxChars) // only when the labels alone exceed maxChars
	}
	return b.String()
}

// bodyCap is the largest body length c such that the transcript with every
// body cut to c fits maxChars, or -1 when nothing needs cutting.
func bodyCap(es []transcriptEntry, maxChars int) int {
	budget, total := maxChars, 0
	lens := make([]int, len(es))
	for i, e := range es {
		budget -= len(e.label) + 1
		lens[i] = len(e.body)
		total += lens[i]
	}
	if total <= budget {
		return -1
	}
	if budget <= 0 {
		return 0
	}
	sort.Ints(lens)
	// Raise c level by level: below the k-th shortest body, the n-k longer
	// bodies share what the shorter ones left.
	used := 0
	for k, l := range lens {
		rest := len(lens) - k
		if used+l*rest > budget {
			return (budget - used) / rest
		}
		used += l
	}
	return lens[len(lens)-1]
}

// capText returns s when it has at most n bytes, else its head and tail
// around an omission marker, n bytes at most, cut on UTF-8 boundaries. The
// marker has no newline, so a cut never starts a line with a label.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	keep := n - len(fmt.Sprintf(" …[%d bytes omitted]… ", len(s)))
	if keep < 0 {
		return s[:runeBack(s, n)]
	}
	head := runeBack(s, keep/2)
	tail := runeForward(s, len(s)-(keep-head))
	return s[:head] + fmt.Sprintf(" …[%d bytes omitted]… ", tail-head) + s[tail:]
}

// runeBack moves i back to the start of a UTF-8 character of s.
func runeBack(s string, i int) int {
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return i
}

// runeForward moves i forward to the start of a UTF-8 character of s.
func runeForward(s string, i int) int {
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return i
}
