package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Command is one row of the commands read model: a command's latest outcome.
type Command struct {
	CommandID         string `json:"commandId"`
	RunID             string `json:"runId"`
	TenantID          string `json:"tenantId"`
	Type              string `json:"type"`
	IdempotencyKey    string `json:"idempotencyKey"`
	Outcome           string `json:"outcome"` // accepted | rejected | duplicate | no_effect | applied
	FirstOutcome      string `json:"firstOutcome"`
	Code              string `json:"code,omitempty"`
	Message           string `json:"message,omitempty"`
	OriginalCommandID string `json:"originalCommandId,omitempty"` // set for duplicates
	OriginalOutcome   string `json:"originalOutcome,omitempty"`   // duplicates: the original command's outcome
	OriginalCode      string `json:"originalCode,omitempty"`      // duplicates: the original command's code, if any
	// CreatedRunID is the run the command created in its session (an applied
	// follow-up: runtime.command.applied createdRunId); for a duplicate of
	// such a command, the original's, as GetCommand reads it.
	CreatedRunID string    `json:"createdRunId,omitempty"`
	Seq          int64     `json:"seq"` // seq of the latest outcome event
	UpdatedAt    time.Time `json:"updatedAt"`
}

// GetCommand returns the latest outcome of commandID for tenantID, or
// ErrNotFound if none is recorded for that tenant. The CreatedRunID of a
// duplicate is its original command's.
func (s *Queries) GetCommand(ctx context.Context, tenantID, commandID string) (Command, error) {
	var c Command
	err := s.pool.QueryRow(ctx, `SELECT c.command_id, c.run_id, c.tenant_id, c.type, c.idempotency_key, c.outcome,
	c.first_outcome, c.code, c.message, c.original_command_id, c.original_outcome, c.original_code, c.seq,
	c.updated_at, COALESCE(NULLIF(c.created_run_id, ''), o.created_run_id, '')
FROM commands AS c LEFT JOIN commands AS o ON c.original_command_id <> '' AND o.command_id = c.original_command_id
	AND o.tenant_id = c.tenant_id AND o.run_id = c.run_id
WHERE c.tenant_id = $1 AND c.command_id = $2`, tenantID, commandID).Scan(
		&c.CommandID, &c.RunID, &c.TenantID, &c.Type, &c.IdempotencyKey, &c.Outcome, &c.FirstOutcome, &c.Code,
		&c.Message, &c.OriginalCommandID, &c.OriginalOutcome, &c.OriginalCode, &c.Seq, &c.UpdatedAt,
		&c.CreatedRunID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Command{}, fmt.Errorf("command %s: %w", commandID, ErrNotFound)
	}
	if err != nil {
		return Command{}, fmt.Errorf("get command %s: %w", commandID, err)
	}
	c.UpdatedAt = c.UpdatedAt.UTC()
	return c, nil
}

// WaitCommand returns the outcome of commandID for tenantID as soon as one is
// committed: at once if it already is, otherwise when ApplyBatch records it.
// It waits until ctx is done and then returns ctx.Err(). Waiting costs no
// connection of its own: all waiters of a Store share one LISTEN connection,
// and each re-checks the table every 200 ms in case a notification is lost.
func (s *Queries) WaitCommand(ctx context.Context, tenantID, commandID string) (Command, error) {
	wake, unsubscribe := s.listener.subscribe(commandID)
	defer unsubscribe()
	tick := time.NewTicker(s.recheck)
	defer tick.Stop()
	for {
		c, err := s.GetCommand(ctx, tenantID, commandID)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return Command{}, ctx.Err()
		}
		if !errors.Is(err, ErrNotFound) {
			return Command{}, err
		}
		select {
		case <-ctx.Done():
			return Command{}, ctx.Err()
		case <-wake:
		case <-tick.C:
		}
	}
}
