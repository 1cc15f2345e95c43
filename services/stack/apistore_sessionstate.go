package stack

import (
	"context"

	pgview "github.com/xbot-runtime/xbot/projections/postgres"
	"github.com/xbot-runtime/xbot/services/api"
)

// GetSessionState reads a session's state (GET /v1/sessions/{id}/state).
func (s *APIReadModels) GetSessionState(ctx context.Context, tenantID, sessionID string) (api.SessionStateRecord, error) {
	st, err := s.Queries.GetSessionState(ctx, tenantID, sessionID)
	if err != nil {
		return api.SessionStateRecord{}, apiErr(err)
	}
	out := api.SessionStateRecord{OwnerID: st.OwnerID, Head: api.SessionRunRecord(st.Head), OpenItemID: st.OpenItemID,
		Pending: interactions(st.Pending), Closed: interactions(st.Closed), PendingMore: st.PendingMore,
		ClosedMore: st.ClosedMore, Queued: st.Queued, Admitted: st.Admitted, QueuedMore: st.QueuedMore,
		AdmittedMore: st.AdmittedMore}
	if st.Open != nil {
		open := api.SessionRunRecord(*st.Open)
		out.Open = &open
	}
	return out, nil
}

func interactions(rs []pgview.SessionInteraction) []api.InteractionRecord {
	return convert(rs, func(r pgview.SessionInteraction) api.InteractionRecord {
		return api.InteractionRecord{RunID: r.RunID, ItemID: r.ItemID, Kind: r.Kind, Status: r.Status,
			ToolName: r.ToolName, Input: r.Input, ApprovalID: r.ApprovalID, RuleID: r.RuleID, Reason: r.Reason,
			Scope: r.Scope, GrantID: r.GrantID, OpenedAt: r.OpenedAt, ClosedAt: r.ClosedAt}
	})
}
