package agentloop

import (
	"encoding/json"
	"strings"

	"github.com/xbot-runtime/xbot/events"
)

// maxNotes bounds the Notes kept from a reply that was not a JSON summary:
// 4 KiB keeps a prose summary useful without letting a runaway reply bloat
// every later request.
const maxNotes = 4096

// maxCandidates bounds the '{' positions tried as the start of the summary.
const maxCandidates = 32

// ParseSummary reads a compaction reply leniently and never fails: code
// fences are dropped and the first balanced {...} object naming a summary
// field is taken; a field of the wrong JSON type is kept as its JSON text, a
// single string where a list belongs becomes a one-element list. A reply
// without such an object is kept whole (cut to maxNotes) in Notes. Lists are
// never nil.
func ParseSummary(text string) events.CompactionSummary {
	text = stripFences(text)
	var s events.CompactionSummary
	if obj, ok := summaryObject(text); ok {
		s = events.CompactionSummary{UserGoal: jsonText(obj["userGoal"]), ExecutedDecisions: jsonList(obj["executedDecisions"]),
			ModifiedFiles: jsonList(obj["modifiedFiles"]), PendingTasks: jsonList(obj["pendingTasks"]), Notes: jsonText(obj["notes"])}
	} else {
		s.Notes = capText(strings.TrimSpace(text), maxNotes)
	}
	for _, l := range []*[]string{&s.ExecutedDecisions, &s.ModifiedFiles, &s.PendingTasks} {
		if *l == nil {
			*l = []string{}
		}
	}
	return s
}

func stripFences(text string) string {
	lines := strings.Split(text, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "```") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

func summaryObject(text string) (map[string]json.RawMessage, bool) {
	from := 0
	for range maxCandidates {
		i := strings.IndexByte(text[from:], '{')
		if i < 0 {
			return nil, false
		}
		start := from + i
		from = start + 1
		end := balancedEnd(text, start)
		var obj map[string]json.RawMessage
		if end < 0 || json.Unmarshal([]byte(text[start:end]), &obj) != nil {
			continue
		}
		for _, k := range []string{"userGoal", "executedDecisions", "modifiedFiles", "pendingTasks"} {
			if _, ok := obj[k]; ok {
				return obj, true
			}
		}
	}
	return nil, false
}

// balancedEnd is the index after the '}' closing the '{' at start, skipping
// braces inside JSON strings, or -1.
func balancedEnd(text string, start int) int {
	depth, inString, escaped := 0, false, false
	for i := start; i < len(text); i++ {
		c := text[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			depth++
		case c == '}':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// jsonText is a JSON string's value, "" for null or absent, else the JSON text.
func jsonText(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	return string(raw)
}

// jsonList is a JSON array's elements as text, or a lone value as one
// element; empty elements are dropped.
func jsonList(raw json.RawMessage) []string {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		elems = []json.RawMessage{raw}
	}
	out := []string{}
	for _, e := range elems {
		if t := jsonText(e); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// RenderSummary is the text the model sees in place of the compacted part of
// the conversation. Empty fields are left out.
func RenderSummary(s events.CompactionSummary) string {
	var b strings.Builder
	b.WriteString("Summary of the conversation so far (earlier messages were compacted):")
	if s.UserGoal != "" {
		b.WriteString("\nGoal: " + s.UserGoal)
	}
	writeSection(&b, "Done", s.ExecutedDecisions)
	writeSection(&b, "Files changed", s.ModifiedFiles)
	writeSection(&b, "Open tasks", s.PendingTasks)
	if s.Notes != "" {
		b.WriteString("\nNotes: " + s.Notes)
	}
	return b.String()
}

func writeSection(b *strings.Builder, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	b.WriteString("\n" + title + ":")
	for _, l := range lines {
		b.WriteString("\n- " + strings.ReplaceAll(l, "\n", continuation))
	}
}

// RetainedItems are the ids of the items a compaction of run keeps verbatim:
// the latest completed user_message item (a steer), if any. The run's input
// is always kept by the projector; the latest steer is the user's most recent
// instruction, which a summary could weaken or lose, while earlier steers are
// superseded by it and covered by the summary. Tool items are never retained:
// a tool result needs the call it answers, which the summary replaced.
func RetainedItems(run []events.Envelope) []string {
	order, _, _ := items(run)
	for i := len(order) - 1; i >= 0; i-- {
		if it := order[i]; it.typ == events.ItemUserMessage && it.status == events.ItemStatusCompleted {
			return []string{it.id}
		}
	}
	return []string{}
}
