package contracttests

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// interrupt: an interrupt of a reply paused for an approval ends it
// cancelled, and the input queued behind it becomes the next reply; with
// cancelQueued the queued input is dropped. An interrupt with nothing in
// progress does nothing.
func (s *runtimeSuite) interrupt(ctx context.Context) error {
	rc, err := s.conversation(AgentApproval)
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	l := follow(ctx, rc, nil)
	defer l.stop()
	first, queued, dropped := freshID("input"), freshID("input"), freshID("input")
	steps := []func() error{
		func() error { return rc.Submit(ctx, agentruntime.Input{ID: first, Content: "first"}) },
		func() error { _, err := l.until(ctx, "the first pause", opened); return err },
		func() error { return rc.Submit(ctx, agentruntime.Input{ID: queued, Content: "queued"}) },
		func() error { return rc.Interrupt(ctx, false) },
		func() error { _, err := l.until(ctx, "the queued input's reply", startedFor(queued)); return err },
		func() error { _, err := l.until(ctx, "its pause", opened); return err },
		func() error { return rc.Submit(ctx, agentruntime.Input{ID: dropped, Content: "dropped"}) },
		func() error { return rc.Interrupt(ctx, true) },
		func() error { return l.idle(ctx) },
		func() error { return rc.Interrupt(ctx, true) }, // nothing in progress
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	if got := ends(l.got); !slices.Equal(got, []string{agentruntime.OutcomeCancelled, agentruntime.OutcomeCancelled}) {
		return fmt.Errorf("the interrupted replies ended %v, want cancelled twice", got)
	}
	return droppedInput(ctx, rc, dropped)
}

// droppedInput: the input dropped with cancelQueued was never admitted and
// is not queued.
func droppedInput(ctx context.Context, rc *agentruntime.Client, id string) error {
	st, err := idleState(ctx, rc)
	if err != nil {
		return err
	}
	if slices.Contains(st.AdmittedInputIDs, id) || slices.Contains(st.QueuedInputIDs, id) || len(st.OpenResponses) != 0 {
		return errors.New("the input dropped by the interrupt is in the state: " + fmt.Sprintf("%+v", st))
	}
	return nil
}
