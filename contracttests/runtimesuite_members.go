package contracttests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// submit: an input submitted twice (also after its reply ended) is one
// input of one reply; a refused input is an InputRefusedError with its code.
func (s *runtimeSuite) submit(ctx context.Context) error {
	rc, err := s.conversation(AgentDemo)
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	l := follow(ctx, rc, nil)
	defer l.stop()
	one, two := agentruntime.Input{ID: freshID("input"), Content: "once"}, agentruntime.Input{ID: freshID("input"), Content: "twice"}
	for range 2 {
		if err := rc.Submit(ctx, one); err != nil {
			return err
		}
	}
	if err := l.idle(ctx); err != nil {
		return err
	}
	if err := rc.Submit(ctx, one); err != nil {
		return fmt.Errorf("the input again after its reply: %w", err)
	}
	if err := rc.Submit(ctx, two); err != nil {
		return err
	}
	if _, err := l.until(ctx, "the second input's reply", startedFor(two.ID)); err != nil {
		return err
	}
	if err := l.idle(ctx); err != nil {
		return err
	}
	if err := oneReplyEach(l.got, one.ID, two.ID); err != nil {
		return err
	}
	return s.refused(ctx)
}

func startedFor(input string) func(agentruntime.Event) bool {
	return func(ev agentruntime.Event) bool {
		r, ok := ev.(agentruntime.ResponseStarted)
		return ok && slices.Contains(r.InputIDs, input)
	}
}

// oneReplyEach: each input was admitted once and answered by a reply of its own.
func oneReplyEach(evs []agentruntime.Event, inputs ...string) error {
	var admitted []string
	var replies [][]string
	for _, ev := range evs {
		switch e := ev.(type) {
		case agentruntime.InputAdmitted:
			admitted = append(admitted, e.InputID)
		case agentruntime.ResponseStarted:
			replies = append(replies, e.InputIDs)
		}
	}
	if !slices.Equal(admitted, inputs) || len(replies) != len(inputs) {
		return fmt.Errorf("inputs %v were admitted as %v and answered by replies %v", inputs, admitted, replies)
	}
	for i, r := range replies {
		if !slices.Equal(r, inputs[i:i+1]) {
			return fmt.Errorf("reply %d answers %v, want [%s]", i, r, inputs[i])
		}
	}
	return nil
}

// refused: the first input of a conversation with an unknown agent.
func (s *runtimeSuite) refused(ctx context.Context) error {
	rc, err := s.conversation("conformance-nobody")
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	err = rc.Submit(ctx, agentruntime.Input{ID: freshID("input"), Content: "hello"})
	var refused *agentruntime.InputRefusedError
	if !errors.As(err, &refused) || refused.Code != "unknown_agent" || refused.Status != 422 {
		return fmt.Errorf("an input for an unknown agent: %w, want an InputRefusedError unknown_agent (422)", err)
	}
	return nil
}

// members: the contract's plain members.
func (s *runtimeSuite) members(ctx context.Context) error {
	rc, err := s.conversation(AgentDemo)
	if err != nil {
		return err
	}
	l := follow(ctx, rc, nil)
	defer l.stop()
	if err := rc.Submit(ctx, agentruntime.Input{ID: freshID("input"), Content: "hi"}); err != nil {
		return err
	}
	if err := l.idle(ctx); err != nil {
		return err
	}
	errs := []error{capabilities(ctx, rc), cursorsOfElsewhere(ctx, rc)}
	if rc.EngineKind() != "xbot" || rc.SessionKey() == "" || !rc.IsLive() {
		errs = append(errs, fmt.Errorf("engine kind %q, session key %q, live %v", rc.EngineKind(), rc.SessionKey(), rc.IsLive()))
	}
	if err := rc.Committed(ctx, l.got[len(l.got)-1].Cursor()); err != nil {
		errs = append(errs, fmt.Errorf("committed of its own cursor: %w", err))
	}
	errs = append(errs, closing(ctx, rc))
	return errors.Join(errs...)
}

func capabilities(ctx context.Context, rc *agentruntime.Client) error {
	m, err := rc.Capabilities(ctx)
	if err != nil {
		return err
	}
	for _, op := range []string{"interrupt", "session_message", "approve", "deny", "clarification"} {
		if !slices.Contains(m.ControlOperations, op) {
			return fmt.Errorf("capabilities %+v lack the control operation %s", m, op)
		}
	}
	if !slices.Contains(m.InputContentTypes, "text") {
		return fmt.Errorf("capabilities %+v lack the input content type text", m)
	}
	return nil
}

// cursorsOfElsewhere: a cursor of another conversation is expired for
// Events and Committed.
func cursorsOfElsewhere(ctx context.Context, rc *agentruntime.Client) error {
	foreign := agentruntime.Cursor{Generation: "xbot/session/elsewhere", Position: json.RawMessage(`{"after":"run_x:1"}`)}
	if err := rc.Committed(ctx, foreign); !errors.Is(err, agentruntime.ErrCursorExpired) {
		return fmt.Errorf("committed of another conversation's cursor: %w, want ErrCursorExpired", err)
	}
	for _, err := range rc.Events(ctx, &foreign) {
		if !errors.Is(err, agentruntime.ErrCursorExpired) {
			return fmt.Errorf("events after another conversation's cursor: %w, want ErrCursorExpired", err)
		}
		break
	}
	return nil
}

// closing: Close ends a running Events loop; afterwards the members answer
// ErrClosed.
func closing(ctx context.Context, rc *agentruntime.Client) error {
	l := follow(ctx, rc, nil)
	defer l.stop()
	if _, err := l.until(ctx, "an event", func(agentruntime.Event) bool { return true }); err != nil {
		return err
	}
	_ = rc.Close()
	_, err := l.until(ctx, "the end of the events", func(agentruntime.Event) bool { return false })
	if !errors.Is(err, agentruntime.ErrClosed) || rc.IsLive() {
		return fmt.Errorf("events after Close: %w, want ErrClosed", err)
	}
	if err := rc.Submit(ctx, agentruntime.Input{ID: freshID("input")}); !errors.Is(err, agentruntime.ErrClosed) {
		return fmt.Errorf("submit after Close: %w, want ErrClosed", err)
	}
	return nil
}
