package scripted

import (
	"context"
	"errors"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/executor"
	"github.com/xbot-runtime/xbot/services/profile"
)

// defaultChunk is the delta size when a turn does not set one: small enough
// to look like streaming, large enough not to flood the log.
const defaultChunk = 16

// Engine plays scripted turns. The zero value is ready to use.
type Engine struct{}

// Execute implements executor.Engine.
func (Engine) Execute(ctx context.Context, run *executor.Run, p profile.Profile) error {
	var last string
	for {
		if stop, err := run.SafePoint(ctx, executor.BeforeModelRequest); err != nil || stop {
			return err
		}
		turn := completedTurns(run.State())
		if turn >= len(p.Script) {
			break
		}
		text, err := playTurn(ctx, run, p.Script[turn])
		if err != nil {
			return err
		}
		last = text
		if stop, err := run.SafePoint(ctx, executor.AfterModelResponse); err != nil || stop {
			return err
		}
	}
	return complete(ctx, run, last)
}

// complete ends the run unless a command is pending, in which case it goes
// back through the safe point so the command is honoured first.
func complete(ctx context.Context, run *executor.Run, output string) error {
	for {
		if stop, err := run.SafePoint(ctx, executor.BeforeRunTerminal); err != nil || stop {
			return err
		}
		_, err := run.Append(ctx, executor.AppendOptions{IfNoPending: true},
			events.Draft{Type: events.RunCompleted, Payload: events.RunCompletedPayload{Output: output}})
		if !errors.Is(err, executor.ErrPendingCommands) {
			return err
		}
	}
}

// completedTurns counts the assistant messages that finished; a message left
// open by a crashed executor was closed as failed and is played again.
func completedTurns(st events.RunState) int {
	n := 0
	for _, it := range st.Items {
		if it.Type == events.ItemAssistantMessage && it.Status == events.ItemStatusCompleted {
			n++
		}
	}
	return n
}

// playTurn streams one turn as an assistant_message item. An interrupted
// stream (a cancel was accepted) closes the item as truncated.
func playTurn(ctx context.Context, run *executor.Run, t profile.Turn) (string, error) {
	itemID := events.NewID("itm")
	text := t.Render(run.State().Input.Content)
	if _, err := run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.ItemStarted, ItemID: itemID,
		Payload: events.ItemStartedPayload{ItemType: events.ItemAssistantMessage}}); err != nil {
		return "", err
	}
	step, cancel := run.Step(ctx)
	sent, err := stream(step, ctx, run, itemID, text, t)
	cancel()
	if err != nil {
		return "", err
	}
	done := events.ItemCompletedPayload{ItemType: events.ItemAssistantMessage, Status: events.ItemStatusCompleted, Content: text}
	if sent < len(text) {
		done.Status, done.Content = events.ItemStatusTruncated, text[:sent]
	}
	_, err = run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.ItemCompleted, ItemID: itemID, Payload: done})
	return text, err
}

// stream appends the deltas of text until it is all sent or step ends. It
// returns how many bytes were sent; an error only when appending failed.
func stream(step, ctx context.Context, run *executor.Run, itemID, text string, t profile.Turn) (int, error) {
	size := t.ChunkChars
	if size <= 0 {
		size = defaultChunk
	}
	sent := 0
	for sent < len(text) {
		if t.Delay > 0 {
			select {
			case <-step.Done():
				return sent, ctx.Err()
			case <-time.After(t.Delay):
			}
		}
		if step.Err() != nil {
			return sent, ctx.Err()
		}
		end := cut(text, sent+size)
		if _, err := run.Append(ctx, executor.AppendOptions{}, events.Draft{Type: events.ItemDelta, ItemID: itemID,
			Payload: events.ItemDeltaPayload{Delta: text[sent:end]}}); err != nil {
			return sent, err
		}
		sent = end
	}
	return sent, nil
}

// cut returns n moved forward to a UTF-8 boundary of s (or len(s)).
func cut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for n < len(s) && s[n]&0xC0 == 0x80 {
		n++
	}
	return n
}
