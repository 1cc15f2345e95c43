package agentloop

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/scripted"
)

func TestEstimateTokensGrowsWithEverything(t *testing.T) {
	t.Parallel()
	msgs := []model.Message{{Role: model.RoleUser, Content: "hello"}}
	base := EstimateTokens(msgs, nil)
	if base != messageOverhead+2 {
		t.Errorf("one 5-byte message: %d, want %d", base, messageOverhead+2)
	}
	steps := []struct {
		name  string
		msgs  []model.Message
		tools []model.ToolSpec
	}{
		{"longer content", []model.Message{{Role: model.RoleUser, Content: "hello, world"}}, nil},
		{"another message", append(msgs, model.Message{Role: model.RoleAssistant}), nil},
		{"a tool call", append(msgs, model.Message{Role: model.RoleAssistant,
			ToolCalls: []model.ToolCall{{Name: "shell", Arguments: `{"command":"ls"}`}}}), nil},
		{"a tool", msgs, []model.ToolSpec{{Name: "shell", Parameters: json.RawMessage(`{}`)}}},
	}
	for _, s := range steps {
		if got := EstimateTokens(s.msgs, s.tools); got <= base {
			t.Errorf("%s: %d, want more than %d", s.name, got, base)
		}
	}
	if got := EstimateTokens(nil, nil); got != 0 {
		t.Errorf("nothing: %d", got)
	}
	// Non-ASCII text counts a token a character, not a quarter of its bytes.
	if got := textTokens("重构订单服务"); got != 6 {
		t.Errorf("6 CJK characters: %d tokens", got)
	}
}

func conversation() []model.Message {
	return []model.Message{
		{Role: model.RoleSystem, Content: "You are a test agent."},
		{Role: model.RoleUser, Content: "fix the build"},
		{Role: model.RoleAssistant, Content: "Checking.", ToolCalls: []model.ToolCall{
			{ID: "c1", Name: "shell", Arguments: `{"command":"go build ./..."}`},
			{ID: "c2", Name: "write_file", Arguments: `{"path":"cmd/x/main.go","content":"package main\n"}`}}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: strings.Repeat("error: undefined: foo\n", 500)},
		{Role: model.RoleTool, ToolCallID: "c2", Content: "created cmd/x/main.go"},
		{Role: model.RoleUser, Content: "use Go 1.26 features, é"},
	}
}

func TestCompactionRequestFitsMaxChars(t *testing.T) {
	t.Parallel()
	msgs := conversation()
	whole := CompactionRequest("m", msgs, 0).Messages[1].Content
	for _, maxChars := range []int{1, 40, 200, 1000, 4000, len(whole), len(whole) + 100} {
		req := CompactionRequest("m", msgs, maxChars)
		if req.Purpose != model.PurposeCompaction || req.Model != "m" || len(req.Tools) != 0 || len(req.Messages) != 2 ||
			req.Messages[0].Content != CompactionPrompt || req.Messages[1].Role != model.RoleUser {
			t.Fatalf("maxChars %d: %+v", maxChars, req)
		}
		tr := req.Messages[1].Content
		if len(tr) > maxChars || !utf8.ValidString(tr) {
			t.Errorf("maxChars %d: transcript of %d bytes (valid UTF-8: %v)", maxChars, len(tr), utf8.ValidString(tr))
		}
		if maxChars >= 1000 && !strings.Contains(tr, "user: use Go 1.26 features, é\n") {
			t.Errorf("maxChars %d: a short message was cut:\n%s", maxChars, tr)
		}
		if maxChars >= len(whole) && tr != whole {
			t.Errorf("maxChars %d: cut although it fits", maxChars)
		}
	}
	if strings.Contains(whole, "You are a test agent") {
		t.Error("the system prompt is in the transcript")
	}
	for _, line := range []string{"user: fix the build\n", "assistant: Checking.\n", `tool call: shell({"command":"go build ./..."})` + "\n",
		"tool result (shell): error: undefined: foo\n  error:", "tool result (write_file): created cmd/x/main.go\n"} {
		if !strings.Contains(whole, line) {
			t.Errorf("transcript lacks %q", line)
		}
	}
	if cut := CompactionRequest("m", msgs, 1000).Messages[1].Content; !strings.Contains(cut, "bytes omitted]…") {
		t.Errorf("a cut transcript has no omission marker:\n%s", cut)
	}
}

func TestCompactionPromptAsksForExactFacts(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"ONLY a JSON object", `"userGoal"`, `"executedDecisions"`, `"modifiedFiles"`,
		`"pendingTasks"`, "do not invent", "paths", "exact"} {
		if !strings.Contains(CompactionPrompt, want) {
			t.Errorf("CompactionPrompt does not say %q", want)
		}
	}
}

func TestParseSummary(t *testing.T) {
	t.Parallel()
	full := events.CompactionSummary{UserGoal: "fix the build", ExecutedDecisions: []string{"ran go build"},
		ModifiedFiles: []string{"cmd/x/main.go"}, PendingTasks: []string{"run the tests"}}
	empty := events.CompactionSummary{ExecutedDecisions: []string{}, ModifiedFiles: []string{}, PendingTasks: []string{}}
	withNotes := func(s events.CompactionSummary, notes string) events.CompactionSummary { s.Notes = notes; return s }
	js := `{"userGoal":"fix the build","executedDecisions":["ran go build"],"modifiedFiles":["cmd/x/main.go"],"pendingTasks":["run the tests"]}`
	cases := map[string]struct {
		text string
		want events.CompactionSummary
	}{
		"plain JSON":   {js, full},
		"fenced JSON":  {"```json\n" + js + "\n```", full},
		"prose + JSON": {"Here is the summary {as asked}:\n" + js + "\nHope it helps.", full},
		"garbage":      {"  I could not summarise this.  ", withNotes(empty, "I could not summarise this.")},
		"empty":        {"", empty},
		"nulls":        {`{"userGoal":null,"executedDecisions":null,"modifiedFiles":null,"pendingTasks":null}`, empty},
		"missing lists": {`{"userGoal":"g"}`, events.CompactionSummary{UserGoal: "g",
			ExecutedDecisions: []string{}, ModifiedFiles: []string{}, PendingTasks: []string{}}},
		"braces in strings": {`{"userGoal":"make {x} \"}\" work","executedDecisions":[],"modifiedFiles":[],"pendingTasks":[]}`,
			events.CompactionSummary{UserGoal: `make {x} "}" work`, ExecutedDecisions: []string{}, ModifiedFiles: []string{}, PendingTasks: []string{}}},
		"wrong types": {`{"userGoal":["a"],"executedDecisions":"one","modifiedFiles":[1,"",{"p":"x"}],"pendingTasks":{},"notes":"n"}`,
			events.CompactionSummary{UserGoal: `["a"]`, ExecutedDecisions: []string{"one"}, ModifiedFiles: []string{"1", `{"p":"x"}`},
				PendingTasks: []string{"{}"}, Notes: "n"}},
		"unrelated object": {`{"answer":42}`, withNotes(empty, `{"answer":42}`)},
	}
	for name, c := range cases {
		if got := ParseSummary(c.text); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", name, got, c.want)
		}
	}
	if got := ParseSummary(strings.Repeat("x", 10*maxNotes)); len(got.Notes) > maxNotes {
		t.Errorf("notes of %d bytes, want at most %d", len(got.Notes), maxNotes)
	}
}

func TestRenderSummary(t *testing.T) {
	t.Parallel()
	got := RenderSummary(events.CompactionSummary{UserGoal: "fix the build", ExecutedDecisions: []string{"ran go build", "two\nlines"},
		ModifiedFiles: []string{"cmd/x/main.go"}, PendingTasks: []string{"run the tests"}, Notes: "none"})
	want := "Summary of the conversation so far (earlier messages were compacted):\nGoal: fix the build\n" +
		"Done:\n- ran go build\n- two\n  lines\nFiles changed:\n- cmd/x/main.go\nOpen tasks:\n- run the tests\nNotes: none"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := RenderSummary(events.CompactionSummary{}); got != "Summary of the conversation so far (earlier messages were compacted):" {
		t.Errorf("empty summary: %q", got)
	}
}

func TestRetainedItemsKeepsTheLatestSteer(t *testing.T) {
	t.Parallel()
	b := newLog(t, "run_01J000000000000000000000R1", "build it", "")
	if got := RetainedItems(b.Events()); got == nil || len(got) != 0 {
		t.Errorf("no steer: %#v, want an empty list", got)
	}
	b.steer(s1, "first")
	b.response(r1, "", 0, callLs)
	b.steer(s2, "second")
	b.toolOK(r1, callLs, "ok")
	if got := RetainedItems(b.Events()); !reflect.DeepEqual(got, []string{s2}) {
		t.Errorf("got %v, want [%s]", got, s2)
	}
}

// TestCompactionWithScriptedModel pins the transcript format the scripted
// model reads back: a compaction of a projected run summarises it.
func TestCompactionWithScriptedModel(t *testing.T) {
	t.Parallel()
	req := CompactionRequest("scripted", conversation(), 2000)
	resp, err := scripted.New(nil).Stream(context.Background(), req, func(model.Delta) {})
	if err != nil {
		t.Fatal(err)
	}
	got := ParseSummary(resp.Text)
	if got.UserGoal != "fix the build" || len(got.ExecutedDecisions) != 2 || !reflect.DeepEqual(got.ModifiedFiles, []string{"cmd/x/main.go"}) {
		t.Errorf("summary of %q: %+v", resp.Text, got)
	}
}
