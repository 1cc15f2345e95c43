package scripted

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Transcript line prefixes written by agentloop.CompactionRequest.
const (
	userLine = "user: "
	callLine = "tool call: "
)

// Cut lengths of the scripted summary: short enough to keep test goldens
// readable, long enough to tell entries apart.
const (
	maxGoal     = 200
	maxDecision = 120
)

// pathArg finds the "path" argument of a call whose arguments may have been
// cut for length (and so are no longer valid JSON).
var pathArg = regexp.MustCompile(`"path"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// compact answers a compaction call without consuming a script turn: a JSON
// summary read from the transcript (the last user message), streamed like
// any reply.
func (p *Provider) compact(ctx context.Context, req model.Request, onDelta func(model.Delta)) (model.Response, error) {
	resp := model.Response{Model: profile.ModelScripted, FinishReason: "stop"}
	text, err := stream(ctx, profile.Turn{}, summarize(lastUser(req.Messages)), func(s string) { onDelta(model.Delta{Text: s}) })
	resp.Text = text
	if err != nil {
		return resp, err
	}
	n := len(resp.Text) / 4
	resp.Usage = model.Usage{PromptTokens: promptTokens(req), CompletionTokens: n, TotalTokens: promptTokens(req) + n}
	return resp, nil
}

// summarize builds the summary deterministically: the first user line is
// the goal, each tool call a decision, each write_file path a modified file.
func summarize(transcript string) string {
	s := events.CompactionSummary{ExecutedDecisions: []string{}, ModifiedFiles: []string{}, PendingTasks: []string{}}
	for _, line := range strings.Split(transcript, "\n") {
		if rest, ok := strings.CutPrefix(line, userLine); ok && s.UserGoal == "" {
			s.UserGoal = clip(rest, maxGoal)
		}
		call, ok := strings.CutPrefix(line, callLine)
		if !ok {
			continue
		}
		s.ExecutedDecisions = append(s.ExecutedDecisions, "called "+clip(call, maxDecision))
		if !strings.HasPrefix(call, "write_file(") {
			continue
		}
		var path string
		if m := pathArg.FindStringSubmatch(call); m != nil && json.Unmarshal([]byte(`"`+m[1]+`"`), &path) == nil &&
			path != "" && !contains(s.ModifiedFiles, path) {
			s.ModifiedFiles = append(s.ModifiedFiles, path)
		}
	}
	b, _ := json.Marshal(s) // a struct of strings always marshals
	return string(b)
}

// clip cuts s to at most n bytes on a UTF-8 boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
