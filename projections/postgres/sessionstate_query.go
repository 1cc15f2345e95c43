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
	r, err := scanSessionRun(tx.QueryRow(ctx, sessionHeadSQL(sessionRunColumns), tenantID, sessionID))
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

// openReplySQL reads the first running or paused run among the session's
// live runs (runs_session_live) and its open assistant_message item.
const openReplySQL = `SELECT r.run_id, r.status, r.pause_reason, r.last_seq, r.created_at,
	COALESCE((SELECT i.item_id FROM items i WHERE i.run_id = r.run_id AND i.type = 'assistant_message'
	  AND i.status = 'started' ORDER BY i.started_seq DESC LIMIT 1), '')
FROM runs r WHERE r.tenant_id = $1 AND r.platform_session_id = $2 AND r.status IN ('running', 'paused')
ORDER BY r.created_at, r.run_id LIMIT 1`

// openReply reads the first running or paused run and its open
// assistant_message item.
func openReply(ctx context.Context, tx pgx.Tx, tenantID, sessionID string, st *SessionState) error {
	var r SessionRun
	err := tx.QueryRow(ctx, openReplySQL, tenantID, sessionID).Scan(
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

// The interactions of a session: the approvals read model's requests and
// the items read model's clarification_request items, with their status
// in SessionInteraction's terms. Each list is read from the partial indexes
// of migration 0009 in its own order, at most limit rows from each table,
// and the two are merged: a read costs the same in a session of ten runs
// and of ten thousand.
const (
	approvalInteractions = `a.run_id, a.item_id, 'tool_approval' AS kind,
    CASE a.status WHEN 'pending' THEN 'open'
      WHEN 'resolved' THEN CASE a.decision WHEN 'allow' THEN 'approved' ELSE 'denied' END
      ELSE a.status END AS status,
    a.tool_name, '' AS input, a.approval_id, a.rule_id, a.request_reason, a.scope, a.grant_id,
    a.requested_at AS opened_at, a.resolved_at AS closed_at
  FROM approvals a WHERE a.tenant_id = $1 AND a.platform_session_id = $2`
	questionInteractions = `i.run_id, i.item_id, 'question',
    CASE WHEN i.status IN ('started', 'awaiting_approval') THEN 'open'
      WHEN i.status = 'failed' AND i.error_code = 'expired' THEN 'expired'
      WHEN i.status = 'failed' THEN 'cancelled' ELSE 'answered' END,
    i.tool_name, i.input, '', '', '', '', '', i.started_at, i.completed_at
  FROM items i WHERE i.tenant_id = $1 AND i.platform_session_id = $2 AND i.type = 'clarification_request'`
	interactionFields = `run_id, item_id, kind, status, tool_name, input, approval_id, rule_id, request_reason, scope,
  grant_id, opened_at, closed_at`
)

// The limit is one more than MaxStateInteractions, to know there are more.
var (
	interactionLimit       = fmt.Sprint(MaxStateInteractions + 1)
	pendingInteractionsSQL = `SELECT ` + interactionFields + ` FROM (
  (SELECT ` + approvalInteractions + ` AND a.status = 'pending'
   ORDER BY a.requested_at, a.run_id, a.item_id LIMIT ` + interactionLimit + `)
  UNION ALL
  (SELECT ` + questionInteractions + ` AND i.status IN ('started', 'awaiting_approval')
   ORDER BY i.started_at, i.run_id, i.item_id LIMIT ` + interactionLimit + `)
) open ORDER BY opened_at, run_id, item_id LIMIT ` + interactionLimit
	closedInteractionsSQL = `SELECT ` + interactionFields + ` FROM (
  (SELECT ` + approvalInteractions + ` AND a.status <> 'pending'
   ORDER BY a.resolved_at DESC NULLS LAST, a.run_id DESC, a.item_id DESC LIMIT ` + interactionLimit + `)
  UNION ALL
  (SELECT ` + questionInteractions + ` AND i.status NOT IN ('started', 'awaiting_approval')
   ORDER BY i.completed_at DESC NULLS LAST, i.run_id DESC, i.item_id DESC LIMIT ` + interactionLimit + `)
) closed ORDER BY closed_at DESC NULLS LAST, run_id DESC, item_id DESC LIMIT ` + interactionLimit
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

// The inputs of a session, by input id: the Idempotency-Key the client
// sent (the commandId when it sent none). A steer or a clarification
// (AppendUserInput) is queued while accepted and admitted once applied,
// and so is a follow-up (applied at once; the CreateRun it produced under
// the key "follow_up:…" is not an input of its own). A CreateRun's input is
// admitted with the run's acceptance. Each list is read from its partial
// index of migration 0009 (the predicates are the indexes').
const inputColumns = `SELECT COALESCE(NULLIF(c.idempotency_key, ''), c.command_id) FROM commands c
WHERE c.tenant_id = $1 AND c.platform_session_id = $2 AND `

var (
	queuedInputsSQL = inputColumns + `c.type = 'AppendUserInput' AND c.outcome = 'accepted'
ORDER BY c.updated_at, c.command_id LIMIT ` + fmt.Sprint(MaxStateInputs+1)
	admittedInputsSQL = inputColumns + `((c.type = 'AppendUserInput' AND c.outcome = 'applied')
  OR (c.type = 'CreateRun' AND c.outcome = 'accepted' AND c.idempotency_key NOT LIKE 'follow\_up:%'))
ORDER BY c.updated_at DESC, c.command_id DESC LIMIT ` + fmt.Sprint(MaxStateInputs+1)
)

func sessionInputs(ctx context.Context, tx pgx.Tx, query, tenantID, sessionID string) ([]string, bool, error) {
	rows, err := tx.Query(ctx, query, tenantID, sessionID)
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
