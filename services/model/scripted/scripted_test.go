package scripted_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/model"
	"github.com/xbot-runtime/xbot/services/model/scripted"
	"github.com/xbot-runtime/xbot/services/profile"
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
