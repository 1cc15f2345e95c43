package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// errOriginalUnknown: the read model does not hold the create that made a
// run (its runtime.run.accepted and that command's accepted outcome).
var errOriginalUnknown = errors.New("the original create is not in the read model")

// answerLongEnded answers a create, already claimed under its key by the same
// request, whose run ended longer ago than half of Config.RememberFinished. It
// sends nothing: the executor may have forgotten the run, and would accept the
// create as a new run whose log starts at seq 1 again. The answer is the
// duplicate the executor would have given, read from the read model, or 409
// idempotency_key_expired when the read model does not hold the original
// create. It returns nil, nil when the create is to be sent: the run is
// unknown to the read model, still live, or ended more recently.
//
// A run's ending is its last event, as in the executor: a command answered on
// a finished run (a duplicate, a cancel's no_effect) starts the executor's
// window again, and it moves the runs row's updatedAt alike.
func (a *API) answerLongEnded(ctx context.Context, env commands.Envelope) (*commandOutput, error) {
	run, err := a.findRun(ctx, env.RunID)
	switch {
	case errors.Is(err, errRunNotFound):
		return nil, nil
	case err != nil:
		return nil, a.unreadable(env, err)
	}
	if !events.Status(run.Status).Terminal() || time.Since(run.UpdatedAt) <= a.cfg.RememberFinished/2 {
		return nil, nil
	}
	noteRun(ctx, env.RunID)
	orig, err := a.originalCreate(ctx, env)
	switch {
	case errors.Is(err, errOriginalUnknown):
		return nil, newProblem(http.StatusConflict, events.CodeIdempotencyKeyExpired, fmt.Sprintf(
			"the run this Idempotency-Key created (%s) ended more than %s ago (half of the window in which "+
				"finished runs are remembered, executor_remember_finished), and it is not created again; "+
				"send the new request with a new key", env.RunID, a.cfg.RememberFinished/2))
	case err != nil:
		return nil, a.unreadable(env, err)
	}
	return &commandOutput{Body: longEndedDuplicate(env, orig)}, nil
}

// originalCreate reads the create that made env's run: the command of the
// run's first event, runtime.run.accepted, and that command's outcome. It
// returns errOriginalUnknown unless both are there and name the same run,
// key and an accepted CreateRun.
func (a *API) originalCreate(ctx context.Context, env commands.Envelope) (CommandRecord, error) {
	first, err := a.store.ListEvents(ctx, env.TenantID, env.RunID, 0, 1, a.cfg.MaxEventPageBytes)
	if err != nil {
		return CommandRecord{}, fmt.Errorf("read the first event of run %s: %w", env.RunID, err)
	}
	if len(first) == 0 || first[0].Seq != 1 || first[0].Type != string(events.RunAccepted) || first[0].CommandID == "" {
		return CommandRecord{}, fmt.Errorf("run %s: no runtime.run.accepted at seq 1: %w", env.RunID, errOriginalUnknown)
	}
	orig, err := a.store.GetCommand(ctx, env.TenantID, first[0].CommandID)
	switch {
	case errors.Is(err, ErrNotFound):
		return orig, fmt.Errorf("run %s: command %s: %w", env.RunID, first[0].CommandID, errOriginalUnknown)
	case err != nil:
		return orig, fmt.Errorf("read command %s of run %s: %w", first[0].CommandID, env.RunID, err)
	}
	if orig.Type != string(commands.CreateRun) || orig.RunID != env.RunID || orig.IdempotencyKey != env.IdempotencyKey ||
		firstOutcome(orig) != string(events.OutcomeAccepted) {
		return orig, fmt.Errorf("run %s: command %s is not its accepted create: %w", env.RunID, orig.CommandID, errOriginalUnknown)
	}
	return orig, nil
}

// longEndedDuplicate is the duplicate answer of the executor (resultFor of
// its runtime.command.duplicate), built from the original create. Nothing
// records this request's command, so it names none (no duplicateCommandId).
func longEndedDuplicate(env commands.Envelope, orig CommandRecord) commandResult {
	outcome := firstOutcome(orig)
	return commandResult{RunID: env.RunID, CommandID: orig.CommandID, Outcome: string(events.OutcomeDuplicate),
		Code: string(events.CodeDuplicateCommand), OriginalCommandID: orig.CommandID, OriginalOutcome: outcome,
		OriginalCode: orig.Code, CreatedRunID: orig.CreatedRunID,
		Detail: fmt.Sprintf("idempotency key already used by command %s (%s); the run ended longer ago than "+
			"half of executor_remember_finished, so the read model answers and nothing was sent", orig.CommandID, outcome)}
}

// firstOutcome is the command's first recorded outcome, which stands.
func firstOutcome(c CommandRecord) string {
	if c.FirstOutcome != "" {
		return c.FirstOutcome
	}
	return c.Outcome
}

// unreadable is the 503 of a create whose run cannot be read: sending it
// could create a forgotten run again.
func (a *API) unreadable(env commands.Envelope, err error) error {
	a.log.Warn("reading the run of a repeated create failed", zap.String("run_id", env.RunID),
		zap.String("tenant_id", env.TenantID), zap.Error(err))
	return newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
		"the run this Idempotency-Key names cannot be read right now; retry with the same Idempotency-Key")
}
