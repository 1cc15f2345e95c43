package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// GetSessionState reads the state of the session sessionID of tenantID in
// one read-only, repeatable-read transaction. It returns ErrNotFound when
// the tenant has no run in the session.
func (s *Queries) GetSessionState(ctx context.Context, tenantID, sessionID string) (SessionState, error) {
	var st SessionState
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error { return readSessionState(ctx, tx, tenantID, sessionID, &st) })
	if err != nil {
		return SessionState{}, fmt.Errorf("state of session %s: %w", sessionID, err)
	}
	return st, nil
}

func readSessionState(ctx context.Context, tx pgx.Tx, tenantID, sessionID string, st *SessionState) error {
	var err error
	if st.Head, err = sessionHead(ctx, tx, tenantID, sessionID); err != nil {
		return err
	}
	if err := sessionOwner(ctx, tx, tenantID, sessionID, st); err != nil {
		return err
	}
	if err := openReply(ctx, tx, tenantID, sessionID, st); err != nil {
		return err
	}
	if st.Pending, st.PendingMore, err = sessionInteractions(ctx, tx, pendingInteractionsSQL, tenantID, sessionID); err != nil {
		return err
	}
	if st.Closed, st.ClosedMore, err = sessionInteractions(ctx, tx, closedInteractionsSQL, tenantID, sessionID); err != nil {
		return err
	}
	slices.Reverse(st.Closed)
	if st.Queued, st.QueuedMore, err = sessionInputs(ctx, tx, queuedInputsSQL, tenantID, sessionID); err != nil {
		return err
	}
	if st.Admitted, st.AdmittedMore, err = sessionInputs(ctx, tx, admittedInputsSQL, tenantID, sessionID); err != nil {
		return err
	}
	slices.Reverse(st.Admitted)
	return nil
}

const sessionRunColumns = "run_id, status, pause_reason, last_seq, created_at"

func scanSessionRun(row pgx.Row) (SessionRun, error) {
	var r SessionRun
	err := row.Scan(&r.RunID, &r.Status, &r.PauseReason, &r.LastSeq, &r.CreatedAt)
	r.CreatedAt = r.CreatedAt.UTC()
	return r, err
}

// sessionHead is StreamSessionHead's run, with what the state shows of it.
func sessionHead(ctx context.Context, tx pgx.Tx, tenantID, sessionID string) (SessionRun, error) {
	r, err := scanSessionRun(tx.QueryRow(ctx, `SELECT `+sessionRunColumns+` FROM (
  (SELECT `+sessionRunColumns+`, 0 AS pick FROM runs
   WHERE tenant_id = $1 AND platform_session_id = $2 AND status <> ALL($3)
   ORDER BY created_at, run_id LIMIT 1)
  UNION ALL
  (SELECT `+sessionRunColumns+`, 1 AS pick FROM runs
   WHERE tenant_id = $1 AND platform_session_id = $2
   ORDER BY created_at DESC, run_id DESC LIMIT 1)
) head ORDER BY pick LIMIT 1`, tenantID, sessionID, terminalStatuses()))
	if errors.Is(err, pgx.ErrNoRows) {
		return SessionRun{}, fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return SessionRun{}, fmt.Errorf("head: %w", err)
	}
	return r, nil
}

func sessionOwner(ctx context.Context, tx pgx.Tx, tenantID, sessionID string, st *SessionState) error {
	err := tx.QueryRow(ctx, `SELECT owner_actor_id FROM session_owners
WHERE tenant_id = $1 AND platform_session_id = $2`, tenantID, sessionID).Scan(&st.OwnerID)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("owner: %w", err)
	}
	return nil
}

// openReply reads the first running or paused run and its open
// assistant_message item.
func openReply(ctx context.Context, tx pgx.Tx, tenantID, sessionID string, st *SessionState) error {
	var r SessionRun
	err := tx.QueryRow(ctx, `SELECT r.run_id, r.status, r.pause_reason, r.last_seq, r.created_at,
	COALESCE((SELECT i.item_id FROM items i WHERE i.run_id = r.run_id AND i.type = 'assistant_message'
	  AND i.status = 'started' ORDER BY i.started_seq DESC LIMIT 1), '')
FROM runs r WHERE r.tenant_id = $1 AND r.platform_session_id = $2 AND r.status IN ('running', 'paused')
ORDER BY r.created_at, r.run_id LIMIT 1`, tenantID, sessionID).Scan(
		&r.RunID, &r.Status, &r.PauseReason, &r.LastSeq, &r.CreatedAt, &st.OpenItemID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("open reply: %w", err)
	}
	r.CreatedAt = r.CreatedAt.UTC()
	st.Open = &r
	return nil
}

// interactionsCTE is every interaction of the session's runs: the approvals
// read model's requests and the items read model's clarification_request
// items, with their status in SessionInteraction's terms.
const interactionsCTE = `WITH session_runs AS (
  SELECT run_id FROM runs WHERE tenant_id = $1 AND platform_session_id = $2
), interactions AS (
  SELECT a.run_id, a.item_id, 'tool_approval' AS kind,
    CASE a.status WHEN 'pending' THEN 'open'
      WHEN 'resolved' THEN CASE a.decision WHEN 'allow' THEN 'approved' ELSE 'denied' END
      ELSE a.status END AS status,
    a.tool_name, '' AS input, a.approval_id, a.rule_id, a.request_reason, a.scope, a.grant_id,
    a.requested_at AS opened_at, a.resolved_at AS closed_at
  FROM approvals a JOIN session_runs USING (run_id)
  UNION ALL
  SELECT i.run_id, i.item_id, 'question',
    CASE WHEN i.status IN ('started', 'awaiting_approval') THEN 'open'
      WHEN i.status = 'failed' AND i.error_code = 'expired' THEN 'expired'
      WHEN i.status = 'failed' THEN 'cancelled' ELSE 'answered' END,
    i.tool_name, i.input, '', '', '', '', '', i.started_at, i.completed_at
  FROM items i JOIN session_runs USING (run_id) WHERE i.type = 'clarification_request'
)
SELECT run_id, item_id, kind, status, tool_name, input, approval_id, rule_id, request_reason, scope, grant_id,
  opened_at, closed_at FROM interactions `

// The limit is one more than MaxStateInteractions, to know there are more.
var (
	pendingInteractionsSQL = interactionsCTE + `WHERE status = 'open'
ORDER BY opened_at, run_id, item_id LIMIT ` + fmt.Sprint(MaxStateInteractions+1)
	closedInteractionsSQL = interactionsCTE + `WHERE status <> 'open'
ORDER BY closed_at DESC NULLS LAST, run_id DESC, item_id DESC LIMIT ` + fmt.Sprint(MaxStateInteractions+1)
)

func sessionInteractions(ctx context.Context, tx pgx.Tx, query, tenantID, sessionID string) ([]SessionInteraction, bool, error) {
	rows, err := tx.Query(ctx, query, tenantID, sessionID)
	if err != nil {
		return nil, false, fmt.Errorf("interactions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SessionInteraction, error) {
		var v SessionInteraction
		err := row.Scan(&v.RunID, &v.ItemID, &v.Kind, &v.Status, &v.ToolName, &v.Input, &v.ApprovalID, &v.RuleID,
			&v.Reason, &v.Scope, &v.GrantID, &v.OpenedAt, &v.ClosedAt)
		v.OpenedAt = v.OpenedAt.UTC()
		if v.ClosedAt != nil {
			at := v.ClosedAt.UTC()
			v.ClosedAt = &at
		}
		return v, err
	})
	if err != nil {
		return nil, false, fmt.Errorf("interactions: %w", err)
	}
	more := len(out) > MaxStateInteractions
	return out[:min(len(out), MaxStateInteractions)], more, nil
}

// inputsCTE is every input command of the session's runs, by its input id:
// the Idempotency-Key the client sent (the commandId when it sent none). A
// steer or a clarification (AppendUserInput) is queued while accepted and
// admitted once applied, and so is a follow-up (applied at once; the
// CreateRun it produced under the key "follow_up:…" is not an input of its
// own). A CreateRun's input is admitted with the run's acceptance.
// $3 lists the command types that carry an input into a run
// (inputCommandTypes).
const inputsCTE = `WITH inputs AS (
  SELECT COALESCE(NULLIF(c.idempotency_key, ''), c.command_id) AS input_id, c.command_id, c.updated_at,
    CASE WHEN c.type = ANY($3) AND c.outcome = 'accepted' THEN 'queued'
      WHEN c.type = ANY($3) AND c.outcome = 'applied' THEN 'admitted'
      WHEN c.type = 'CreateRun' AND c.outcome = 'accepted' AND c.idempotency_key NOT LIKE 'follow\_up:%' THEN 'admitted'
    END AS state
  FROM commands c JOIN runs r ON r.run_id = c.run_id
  WHERE r.tenant_id = $1 AND r.platform_session_id = $2 AND c.tenant_id = $1
)
SELECT input_id FROM inputs `

// inputCommandTypes are the commands whose input enters a run at a safe
// point or at once: queued while accepted, admitted once applied.
var inputCommandTypes = []string{"AppendUserInput"}

var (
	queuedInputsSQL = inputsCTE + `WHERE state = 'queued'
ORDER BY updated_at, command_id LIMIT ` + fmt.Sprint(MaxStateInputs+1)
	admittedInputsSQL = inputsCTE + `WHERE state = 'admitted'
ORDER BY updated_at DESC, command_id DESC LIMIT ` + fmt.Sprint(MaxStateInputs+1)
)

func sessionInputs(ctx context.Context, tx pgx.Tx, query, tenantID, sessionID string) ([]string, bool, error) {
	rows, err := tx.Query(ctx, query, tenantID, sessionID, inputCommandTypes)
	if err != nil {
		return nil, false, fmt.Errorf("inputs: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, false, fmt.Errorf("inputs: %w", err)
	}
	more := len(out) > MaxStateInputs
	return out[:min(len(out), MaxStateInputs)], more, nil
}
