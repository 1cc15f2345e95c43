package contracttests

import (
	"context"
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// idempotency sends every command type twice under one key: the second is
// a duplicate of the first (its id, its outcome) and changes nothing; another
// body under a used key is refused idempotency_key_reused.
func (s *apiSuite) idempotency(ctx context.Context) error {
	r := newRuns(s.main(), "idempotency")
	defer r.cleanup()
	k := &keyed{r: r}
	ws := r.name("ws")
	run := k.twice("a create", func(key string) (client.CommandResult, error) {
		return r.c.CreateRun(ctx, client.CreateRunRequest{AgentID: AgentApproval, Input: client.UserInput{Content: "x"},
			SandboxKey: &client.SandboxKeyRequest{WorkspaceID: ws}}, client.CommandOptions{IdempotencyKey: key})
	}).RunID
	r.track(run)
	k.errs = append(k.errs, reusedKey(ctx, r.c, r.name("key"), ws))
	if err := k.runCommands(ctx, run); err != nil {
		k.errs = append(k.errs, err)
	}
	k.errs = append(k.errs, sessionIdempotency(ctx, r))
	return errors.Join(k.errs...)
}

// keyed sends commands twice under one key and keeps what went wrong.
type keyed struct {
	r    *runs
	errs []error
}

// twice sends a command under a fresh key, then again: the second must be a
// duplicate of the first (its id, its outcome). It returns the first answer.
func (k *keyed) twice(what string, send func(key string) (client.CommandResult, error)) client.CommandResult {
	key := k.r.name("key")
	first, err := send(key)
	if _, err := answered(first, err); err != nil {
		k.errs = append(k.errs, fmt.Errorf("%s: %w", what, err))
		return first
	}
	again, err := send(key)
	if _, err := answered(again, err); err != nil {
		k.errs = append(k.errs, fmt.Errorf("%s again: %w", what, err))
		return first
	}
	if again.Outcome != client.OutcomeDuplicate || again.CommandID != first.CommandID || again.OriginalOutcome != first.Outcome {
		k.errs = append(k.errs, fmt.Errorf("%s again under key %s: %+v, want a duplicate of %s (%s)", what, key, again, first.CommandID, first.Outcome))
	}
	return first
}

// runCommands sends each run command twice to run, an approval run, as it
// pauses, is decided and completes.
func (k *keyed) runCommands(ctx context.Context, run string) error {
	c := k.r.c
	if _, err := await(ctx, c, run, "paused", "awaiting_approval"); err != nil {
		return err
	}
	k.twice("a compaction", func(key string) (client.CommandResult, error) {
		return c.CompactRun(ctx, run, "", client.CommandOptions{IdempotencyKey: key})
	})
	k.twice("a steer of a paused run (rejected)", func(key string) (client.CommandResult, error) {
		return c.AppendInput(ctx, run, client.AppendInputRequest{Intent: client.IntentSteer, Content: "x"}, client.CommandOptions{IdempotencyKey: key})
	})
	item, err := pendingItem(ctx, c, run)
	if err != nil {
		return err
	}
	k.twice("an approval decision", func(key string) (client.CommandResult, error) {
		return c.DecideApproval(ctx, run, client.ApprovalDecisionRequest{ItemID: item, Decision: "allow", Scope: "item"},
			client.CommandOptions{IdempotencyKey: key})
	})
	if _, err := await(ctx, c, run, "completed", ""); err != nil {
		return err
	}
	k.twice("a follow-up", func(key string) (client.CommandResult, error) {
		res, err := c.AppendInput(ctx, run, client.AppendInputRequest{Intent: client.IntentFollowUp, Content: "y"}, client.CommandOptions{IdempotencyKey: key})
		k.r.track(res.CreatedRunID)
		return res, err
	})
	k.twice("a cancel", func(key string) (client.CommandResult, error) {
		return c.CancelRun(ctx, run, "", client.CommandOptions{IdempotencyKey: key})
	})
	return nil
}

// reusedKey: another body under a used key is refused, and nothing changes.
func reusedKey(ctx context.Context, c *client.Client, key, ws string) error {
	req := client.CreateRunRequest{AgentID: AgentDemo, Input: client.UserInput{Content: "first"}, SandboxKey: &client.SandboxKeyRequest{WorkspaceID: ws}}
	first, err := c.CreateRun(ctx, req, client.CommandOptions{IdempotencyKey: key})
	if err != nil {
		return fmt.Errorf("create under %s: %w", key, err)
	}
	req.Input.Content = "another"
	if _, err := c.CreateRun(ctx, req, client.CommandOptions{IdempotencyKey: key}); !errors.Is(err, client.ErrIdempotencyKeyReused) {
		return fmt.Errorf("another create under used key %s: %w, want 422 idempotency_key_reused", key, err)
	}
	if run, err := c.GetRun(ctx, first.RunID); err != nil || run.Input.Content != "first" {
		return fmt.Errorf("the first run after the refused reuse: %+v %w", run, err)
	}
	return nil
}

// sessionIdempotency: a session message and an interrupt again under their
// keys are duplicates; another message under the message's key is refused.
func sessionIdempotency(ctx context.Context, r *runs) error {
	session, key := r.name("session"), r.name("key")
	msg := client.SessionMessageRequest{Content: "hello", AgentID: AgentDemo}
	first, err := r.c.SendSessionMessage(ctx, session, msg, client.CommandOptions{IdempotencyKey: key})
	if err != nil {
		return fmt.Errorf("a session message: %w", err)
	}
	r.track(first.RunID)
	again, err := r.c.SendSessionMessage(ctx, session, msg, client.CommandOptions{IdempotencyKey: key})
	if err != nil || again.Outcome != client.OutcomeDuplicate || again.RunID != first.RunID {
		return fmt.Errorf("the session message again: %+v %w, want a duplicate naming run %s", again, err, first.RunID)
	}
	msg.Content = "changed"
	if _, err := r.c.SendSessionMessage(ctx, session, msg, client.CommandOptions{IdempotencyKey: key}); !errors.Is(err, client.ErrIdempotencyKeyReused) {
		return fmt.Errorf("another message under the key: %w, want 422 idempotency_key_reused", err)
	}
	ikey := r.name("key")
	one, err := r.c.InterruptSession(ctx, session, client.InterruptRequest{}, client.CommandOptions{IdempotencyKey: ikey})
	if err != nil {
		return fmt.Errorf("an interrupt: %w", err)
	}
	two, err := r.c.InterruptSession(ctx, session, client.InterruptRequest{}, client.CommandOptions{IdempotencyKey: ikey})
	if err != nil || two.Outcome != client.OutcomeDuplicate || two.CommandID != one.CommandID {
		return fmt.Errorf("the interrupt again: %+v %w, want a duplicate of %s", two, err, one.CommandID)
	}
	return nil
}
