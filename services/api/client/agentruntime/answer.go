package agentruntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// Response is the user's answer to an interaction: Decision ("allow" or
// "deny"), Scope ("item", "run" or "platform_session"; default "item") and
// Reason for a tool approval; Text for a question.
type Response struct {
	Decision string
	Scope    string
	Reason   string
	Text     string
}

// ErrInteractionNotOpen says the interaction is not open: unknown, or
// closed without an answer (withdrawn, expired).
var ErrInteractionNotOpen = errors.New("agentruntime: interaction not open")

// answerWait bounds how long Answer waits for the state to show an
// interaction it has not seen in the events: the read models lag the log
// by a projector batch, far less than this.
const answerWait = 5 * time.Second

// Answer hands the user's answer to an open interaction: an approval's
// decision (POST /v1/runs/{runId}/approval-decisions) or a question's
// answer (POST /v1/runs/{runId}/inputs, intent clarification), sent under
// the key "answer-<interactionId>", so a repeated delivery is the same
// answer. It returns nil when the runtime has the answer, also when it
// already had one (the state keeps the receipt), and ErrInteractionNotOpen
// when the interaction is unknown, withdrawn or expired.
func (c *Client) Answer(ctx context.Context, interactionID string, r Response) error {
	if err := c.live(); err != nil {
		return err
	}
	in, err := c.interaction(ctx, interactionID)
	if errors.Is(err, errAnswered) {
		return nil
	}
	if err != nil {
		return err
	}
	err = c.send(ctx, interactionID, in, r)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, client.ErrApprovalNotPending), errors.Is(err, client.ErrInvalidState):
		return c.receipt(ctx, interactionID)
	}
	return fmt.Errorf("agentruntime: answer %s: %w", interactionID, err)
}

func (c *Client) send(ctx context.Context, id string, in seenInteraction, r Response) error {
	opts := client.CommandOptions{IdempotencyKey: "answer-" + id}
	if in.kind == client.KindQuestion {
		_, err := c.cfg.API.AppendInput(ctx, in.runID, client.AppendInputRequest{Intent: client.IntentClarification,
			Content: r.Text, InteractionID: id}, opts)
		return err
	}
	scope := r.Scope
	if scope == "" {
		scope = "item"
	}
	_, err := c.cfg.API.DecideApproval(ctx, in.runID, client.ApprovalDecisionRequest{ItemID: id, Decision: r.Decision,
		Scope: scope, Reason: r.Reason}, opts)
	return err
}

// errAnswered says the interaction was answered already.
var errAnswered = errors.New("answered already")

// interaction finds an open interaction: one the events showed, else in
// the state, which is given a moment to catch up with the log.
func (c *Client) interaction(ctx context.Context, id string) (seenInteraction, error) {
	c.mu.Lock()
	in, ok := c.seen[id]
	c.mu.Unlock()
	if ok {
		return in, nil
	}
	deadline := time.Now().Add(answerWait)
	for delay := firstRunPoll; ; delay = min(2*delay, firstRunPollMax) {
		st, err := c.State(ctx)
		if err != nil && !errors.Is(err, client.ErrNotFound) {
			return in, err
		}
		for _, i := range st.PendingInteractions {
			if i.InteractionID == id {
				return seenInteraction{runID: i.ResponseID, kind: i.Kind}, nil
			}
		}
		if closed, ok := findClosed(st, id); ok || time.Now().After(deadline) {
			if err := receiptOf(id, closed, ok); err != nil {
				return in, err
			}
			return in, errAnswered
		}
		if err := sleep(ctx, delay); err != nil {
			return in, err
		}
	}
}

// receipt is Answer's result for an interaction the runtime no longer
// waits on: nil when it was answered, ErrInteractionNotOpen otherwise.
func (c *Client) receipt(ctx context.Context, id string) error {
	deadline := time.Now().Add(answerWait)
	for delay := firstRunPoll; ; delay = min(2*delay, firstRunPollMax) {
		st, err := c.State(ctx)
		if err != nil {
			return err
		}
		if closed, ok := findClosed(st, id); ok || time.Now().After(deadline) {
			return receiptOf(id, closed, ok)
		}
		if err := sleep(ctx, delay); err != nil {
			return err
		}
	}
}

func findClosed(st State, id string) (Interaction, bool) {
	for _, i := range st.ClosedInteractions {
		if i.InteractionID == id {
			return i, true
		}
	}
	return Interaction{}, false
}

func receiptOf(id string, closed Interaction, ok bool) error {
	if ok && closed.Reason == ClosedAnswered {
		return nil
	}
	if ok {
		return fmt.Errorf("%w: %s was %s", ErrInteractionNotOpen, id, closed.Reason)
	}
	return fmt.Errorf("%w: %s is not an open interaction of this conversation", ErrInteractionNotOpen, id)
}
