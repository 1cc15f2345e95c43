package contracttests

import (
	"context"

	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// tour is a conversation the suite drove, with the events a live reader
// saw from its start, and what the suite expects of it.
type tour struct {
	name  string
	agent string
	rc    *agentruntime.Client
	evs   []agentruntime.Event
	// closes are the reasons its interactions close with, in order.
	closes []string
	// failed says a reply failed.
	failed bool
}

var tourBuilders = []func(ctx context.Context, s *runtimeSuite) (*tour, error){
	tourApprovals, tourQuestion, tourFailed, tourInterrupted, tourWithdrawn, tourExpired,
}

// drive starts a conversation of agent, submits its first input and calls
// steps with a live reader; the tour holds what the reader saw.
func drive(ctx context.Context, s *runtimeSuite, t *tour, steps func(l *live) error) (*tour, error) {
	rc, err := s.conversation(t.agent)
	if err != nil {
		return t, err
	}
	t.rc = rc
	l := follow(ctx, rc, nil)
	defer l.stop()
	if err := rc.Submit(ctx, agentruntime.Input{ID: freshID("input"), Content: "first"}); err != nil {
		return t, err
	}
	err = steps(l)
	t.evs = l.got
	return t, err
}

func opened(ev agentruntime.Event) bool { return is[agentruntime.InteractionOpened](ev) }

// answerNext waits for the next interaction and answers it with r.
func answerNext(ctx context.Context, l *live, rc *agentruntime.Client, r agentruntime.Response) error {
	ev, err := l.until(ctx, "InteractionOpened", opened)
	if err != nil {
		return err
	}
	return rc.Answer(ctx, ev.(agentruntime.InteractionOpened).InteractionID, r)
}

func tourApprovals(ctx context.Context, s *runtimeSuite) (*tour, error) {
	t := &tour{name: "approvals", agent: AgentApproval, closes: []string{agentruntime.ClosedAnswered, agentruntime.ClosedAnswered}}
	return drive(ctx, s, t, func(l *live) error {
		if err := answerNext(ctx, l, t.rc, agentruntime.Response{Decision: "allow"}); err != nil {
			return err
		}
		if err := l.idle(ctx); err != nil {
			return err
		}
		if err := t.rc.Submit(ctx, agentruntime.Input{ID: freshID("input"), Content: "second"}); err != nil {
			return err
		}
		if err := answerNext(ctx, l, t.rc, agentruntime.Response{Decision: "deny", Reason: "not this time"}); err != nil {
			return err
		}
		return l.idle(ctx)
	})
}

func tourQuestion(ctx context.Context, s *runtimeSuite) (*tour, error) {
	t := &tour{name: "question", agent: AgentQuestion, closes: []string{agentruntime.ClosedAnswered}}
	return drive(ctx, s, t, func(l *live) error {
		if err := answerNext(ctx, l, t.rc, agentruntime.Response{Text: "green"}); err != nil {
			return err
		}
		return l.idle(ctx)
	})
}

func tourFailed(ctx context.Context, s *runtimeSuite) (*tour, error) {
	t := &tour{name: "failed", agent: AgentFail, failed: true}
	return drive(ctx, s, t, func(l *live) error { return l.idle(ctx) })
}

func tourInterrupted(ctx context.Context, s *runtimeSuite) (*tour, error) {
	t := &tour{name: "interrupted", agent: AgentSlow}
	return drive(ctx, s, t, func(l *live) error {
		if _, err := l.until(ctx, "a text delta", func(ev agentruntime.Event) bool { return frameType(ev) == "text-delta" }); err != nil {
			return err
		}
		if err := t.rc.Interrupt(ctx, false); err != nil {
			return err
		}
		return l.idle(ctx)
	})
}

func tourWithdrawn(ctx context.Context, s *runtimeSuite) (*tour, error) {
	t := &tour{name: "withdrawn", agent: AgentApproval, closes: []string{agentruntime.ClosedWithdrawn}}
	return drive(ctx, s, t, func(l *live) error {
		if _, err := l.until(ctx, "InteractionOpened", opened); err != nil {
			return err
		}
		if err := t.rc.Interrupt(ctx, true); err != nil {
			return err
		}
		return l.idle(ctx)
	})
}

func tourExpired(ctx context.Context, s *runtimeSuite) (*tour, error) {
	t := &tour{name: "expired", agent: AgentExpire, closes: []string{agentruntime.ClosedExpired}}
	return drive(ctx, s, t, func(l *live) error {
		if _, err := l.until(ctx, "InteractionOpened", opened); err != nil {
			return err
		}
		return l.idle(ctx)
	})
}
