package scripted_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/scripted"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

func TestScriptedPlaysTurnsAndRepeatsTheLast(t *testing.T) {
	t.Parallel()
	p := scripted.New([]profile.Turn{
		{Text: "You said: {{input}}", ChunkChars: 3, Reasoning: "think"},
		{ToolCalls: []profile.ScriptedCall{{Name: "shell", Arguments: `{"command":`}}},
	})
	msgs := []model.Message{{Role: model.RoleUser, Content: "first"}, {Role: model.RoleAssistant, Content: "x"},
		{Role: model.RoleUser, Content: "héllo"}}
	var text, reasoning string
	var deltas int
	resp, err := p.Stream(context.Background(), model.Request{Messages: msgs}, func(d model.Delta) {
		text, reasoning, deltas = text+d.Text, reasoning+d.Reasoning, deltas+1
	})
	if err != nil || resp.Text != "You said: héllo" || text != resp.Text || reasoning != "think" || resp.FinishReason != "stop" {
		t.Fatalf("turn 0: %+v streamed %q/%q (%v)", resp, text, reasoning, err)
	}
	if deltas < 5 {
		t.Errorf("%d deltas, want the text in 3-byte pieces", deltas)
	}
	for _, turn := range []int{1, 7} { // past the end the last turn repeats
		resp, err = p.Stream(context.Background(), model.Request{Turn: turn}, func(model.Delta) {})
		if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != `{"command":` || resp.FinishReason != "tool_calls" {
			t.Fatalf("turn %d: %+v (%v)", turn, resp, err)
		}
	}
}

func TestScriptedErrorsAreTyped(t *testing.T) {
	t.Parallel()
	p := scripted.New([]profile.Turn{{Error: "context_overflow"}, {Error: "rate_limited"}})
	_, err := p.Stream(context.Background(), model.Request{}, func(model.Delta) {})
	if !errors.Is(err, model.ErrContextOverflow) {
		t.Errorf("context_overflow: %v", err)
	}
	_, err = p.Stream(context.Background(), model.Request{Turn: 1}, func(model.Delta) {})
	var me *model.Error
	if !errors.As(err, &me) || me.Status != 429 || !me.Retryable {
		t.Errorf("rate_limited: %v", err)
	}
}

func TestScriptedStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	p := scripted.New([]profile.Turn{{Text: "a long, slow answer", ChunkChars: 1, Delay: time.Hour}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	resp, err := p.Stream(ctx, model.Request{}, func(model.Delta) { t.Error("no delta after cancel") })
	if !errors.Is(err, context.Canceled) || resp.Text != "" {
		t.Errorf("cancelled stream: %+v (%v)", resp, err)
	}
}

func TestScriptedCompactionConsumesNoTurn(t *testing.T) {
	t.Parallel()
	// Every script turn fails: a compaction that consumed one would fail too.
	p := scripted.New([]profile.Turn{{Error: "context_overflow"}})
	transcript := "user: refactor the retry module\n" +
		"assistant: Reading it.\n" +
		"tool call: read_file({\"path\":\"service/retry.go\"})\n" +
		"tool result (read_file): package service\n  func Retry() {}\n" +
		"tool call: write_file({\"path\":\"service/retry.go\",\"content\":\"package serv …[900 bytes omitted]… \"})\n" +
		"tool call: write_file({\"path\":\"service/retry.go\",\"content\":\"x\"})\n" +
		"user: also add tests\n"
	req := model.Request{Purpose: model.PurposeCompaction, Turn: 0, Messages: []model.Message{
		{Role: model.RoleSystem, Content: "summarise"}, {Role: model.RoleUser, Content: transcript}}}
	var streamed string
	resp, err := p.Stream(context.Background(), req, func(d model.Delta) { streamed += d.Text })
	if err != nil || streamed != resp.Text || resp.FinishReason != "stop" || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Fatalf("compaction: %+v streamed %q (%v)", resp, streamed, err)
	}
	var got events.CompactionSummary
	if err := json.Unmarshal([]byte(resp.Text), &got); err != nil {
		t.Fatalf("summary %q: %v", resp.Text, err)
	}
	want := events.CompactionSummary{
		UserGoal: "refactor the retry module",
		ExecutedDecisions: []string{`called read_file({"path":"service/retry.go"})`,
			`called write_file({"path":"service/retry.go","content":"package serv …[900 bytes omitted]… "})`,
			`called write_file({"path":"service/retry.go","content":"x"})`},
		ModifiedFiles: []string{"service/retry.go"}, PendingTasks: []string{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary:\n got %+v\nwant %+v", got, want)
	}
	if _, err := p.Stream(context.Background(), model.Request{}, func(model.Delta) {}); !errors.Is(err, model.ErrContextOverflow) {
		t.Errorf("turn 0 after the compaction: %v, want the scripted overflow", err)
	}
}

func TestScriptedCompactionCutsLongEntries(t *testing.T) {
	t.Parallel()
	transcript := "user: " + strings.Repeat("é", 300) + "\ntool call: shell(" + strings.Repeat("x", 300) + ")\n"
	resp, err := scripted.New(nil).Stream(context.Background(), model.Request{Purpose: model.PurposeCompaction,
		Messages: []model.Message{{Role: model.RoleUser, Content: transcript}}}, func(model.Delta) {})
	var got events.CompactionSummary
	if err != nil || json.Unmarshal([]byte(resp.Text), &got) != nil {
		t.Fatalf("%q (%v)", resp.Text, err)
	}
	if len(got.UserGoal) != 200 || !utf8.ValidString(got.UserGoal) || len(got.ExecutedDecisions) != 1 || len(got.ExecutedDecisions[0]) != len("called ")+120 {
		t.Errorf("cut summary: %+v", got)
	}
}

func TestScriptedErrorAttempts(t *testing.T) {
	t.Parallel()
	p := scripted.New([]profile.Turn{{Error: "context_overflow", ErrorAttempts: 1, Text: "fits now"}, {Error: "server_error"}})
	for attempt, wantErr := range []bool{true, false, false} {
		resp, err := p.Stream(context.Background(), model.Request{Attempt: attempt}, func(model.Delta) {})
		if wantErr != errors.Is(err, model.ErrContextOverflow) || (!wantErr && resp.Text != "fits now") {
			t.Errorf("attempt %d: %+v (%v)", attempt, resp, err)
		}
	}
	// errorAttempts 0 raises the error on every attempt.
	if _, err := p.Stream(context.Background(), model.Request{Turn: 1, Attempt: 5}, func(model.Delta) {}); err == nil {
		t.Error("errorAttempts 0: no error on attempt 5")
	}
}

func TestScriptedErrorAttemptsValidate(t *testing.T) {
	t.Parallel()
	for name, turn := range map[string]profile.Turn{
		"negative":        {Error: "server_error", ErrorAttempts: -1},
		"without error":   {Text: "hi", ErrorAttempts: 1},
		"nothing to play": {Error: "server_error", ErrorAttempts: 1},
	} {
		p := profile.Profile{ID: "p", Model: profile.ModelScripted, Script: []profile.Turn{turn}}
		if err := p.Validate(); err == nil {
			t.Errorf("%s: %+v is valid", name, turn)
		}
	}
	ok := profile.Profile{ID: "p", Model: profile.ModelScripted, Script: []profile.Turn{
		{Error: "context_overflow", ErrorAttempts: 1, Text: "ok"}, {Error: "server_error"}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid script: %v", err)
	}
}
