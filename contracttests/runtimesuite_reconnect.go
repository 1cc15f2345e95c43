package contracttests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// reconnect: the reader that saw a reply pause goes away; a new reader
// takes over from State's cursor, answers the approval, and sees the reply
// go on to its end, exactly as a reader of the whole conversation does.
func (s *runtimeSuite) reconnect(ctx context.Context) error {
	first, err := s.conversation(AgentApproval)
	if err != nil {
		return err
	}
	l := follow(ctx, first, nil)
	if err := first.Submit(ctx, agentruntime.Input{ID: freshID("input"), Content: "later"}); err != nil {
		return err
	}
	ev, err := l.until(ctx, "InteractionOpened", opened)
	l.stop()
	_ = first.Close()
	if err != nil {
		return err
	}
	id := ev.(agentruntime.InteractionOpened).InteractionID
	next, err := s.reader(first, AgentApproval)
	if err != nil {
		return err
	}
	defer func() { _ = next.Close() }()
	st, err := pendingState(ctx, next, id)
	if err != nil {
		return err
	}
	ln := follow(ctx, next, &st.Cursor)
	defer ln.stop()
	if err := next.Answer(ctx, id, agentruntime.Response{Decision: "allow", Scope: "item"}); err != nil {
		return fmt.Errorf("answer %s from the new reader: %w", id, err)
	}
	if err := ln.idle(ctx); err != nil {
		return err
	}
	return errors.Join(answeredAfter(ln.got, id), answerAgain(ctx, next, id), s.wholeEndsWith(ctx, next, ln.got))
}

// stateLag bounds how long the read models may take to show a pause.
const stateLag = 10 * time.Second

// pendingState waits for the state to show interaction id pending.
func pendingState(ctx context.Context, rc *agentruntime.Client, id string) (agentruntime.State, error) {
	st, err := settledState(ctx, rc, "interaction "+id+" pending", func(st agentruntime.State) bool {
		return slices.ContainsFunc(st.PendingInteractions, func(i agentruntime.Interaction) bool { return i.InteractionID == id })
	})
	if err == nil && (st.Status != agentruntime.StatusWaiting || len(st.OpenResponses) != 1) {
		return st, fmt.Errorf("a paused conversation's state: %s, open %+v", st.Status, st.OpenResponses)
	}
	return st, err
}

// settledState reads the state until ready holds: the state comes from the
// read models, which lag the events by a projector batch.
func settledState(ctx context.Context, rc *agentruntime.Client, what string, ready func(agentruntime.State) bool) (agentruntime.State, error) {
	deadline := time.Now().Add(stateLag)
	for {
		st, err := rc.State(ctx)
		if err == nil && ready(st) {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("the state never showed %s: %+v %w", what, st, err)
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return st, err
		}
	}
}

// idleState waits for the state of an idle conversation.
func idleState(ctx context.Context, rc *agentruntime.Client) (agentruntime.State, error) {
	return settledState(ctx, rc, "the conversation idle", func(st agentruntime.State) bool {
		return st.Status == agentruntime.StatusIdle && len(st.OpenResponses) == 0
	})
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// answeredAfter: the new reader saw the interaction close answered, and the
// reply complete.
func answeredAfter(evs []agentruntime.Event, id string) error {
	closed := slices.ContainsFunc(evs, func(ev agentruntime.Event) bool {
		c, ok := ev.(agentruntime.InteractionClosed)
		return ok && c.InteractionID == id && c.Reason == agentruntime.ClosedAnswered
	})
	if ends := ends(evs); !closed || !slices.Equal(ends, []string{agentruntime.OutcomeCompleted}) {
		return fmt.Errorf("after the answer the new reader saw the interaction closed %v and replies end %v", closed, ends)
	}
	return nil
}

// answerAgain: a repeated answer is accepted (the state keeps the
// receipt); an answer to an interaction that does not exist is not.
func answerAgain(ctx context.Context, rc *agentruntime.Client, id string) error {
	if err := rc.Answer(ctx, id, agentruntime.Response{Decision: "allow"}); err != nil {
		return fmt.Errorf("the same answer again: %w", err)
	}
	if err := rc.Answer(ctx, "itm_00000000000000000000000000", agentruntime.Response{Decision: "allow"}); !errors.Is(err, agentruntime.ErrInteractionNotOpen) {
		return fmt.Errorf("an answer to no interaction: %w, want ErrInteractionNotOpen", err)
	}
	return nil
}

// wholeEndsWith: the events a reader of the whole conversation sees end
// with tail, the events after the state's cursor (compared without their
// cursors, which carry each reader's own mapping state until the reply
// ends).
func (s *runtimeSuite) wholeEndsWith(ctx context.Context, rc *agentruntime.Client, tail []agentruntime.Event) error {
	all, err := s.reader(rc, AgentApproval)
	if err != nil {
		return err
	}
	defer func() { _ = all.Close() }()
	l := follow(ctx, all, nil)
	defer l.stop()
	if err := l.idle(ctx); err != nil {
		return err
	}
	whole := stripped(l.got)
	part := stripped(tail)
	if len(part) > len(whole) || !slices.EqualFunc(whole[len(whole)-len(part):], part, bytes.Equal) {
		return fmt.Errorf("the events after the state's cursor are not the end of the conversation's:\n%s\nvs\n%s", join(part), join(whole))
	}
	return nil
}

func stripped(evs []agentruntime.Event) [][]byte {
	out := make([][]byte, 0, len(evs))
	for _, ev := range evs {
		raw, _ := agentruntime.Encode(ev)
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		delete(m, "at")
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

func join(bs [][]byte) string { return string(bytes.Join(bs, []byte("\n"))) }
