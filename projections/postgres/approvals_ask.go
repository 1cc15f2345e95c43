package postgres

import (
	"github.com/jackc/pgx/v5"

	"github.com/xbot-runtime/xbot/events"
)

// approvalAsk is a request that asks again because the grant that covered
// such calls lapsed.
type approvalAsk struct {
	key             itemKey
	reason, grantID string
}

func (p *batchPlan) noteAsk(k itemKey, v events.ItemAwaitingApprovalPayload) {
	if v.AskReason != "" {
		p.asks = append(p.asks, approvalAsk{key: k, reason: clean(v.AskReason), grantID: clean(v.GrantID)})
	}
}

// setAsksSQL records why the requests ask again; it runs after the
// approvals' insert (queueApprovals).
const setAsksSQL = `UPDATE approvals AS a SET ask_reason = u.re, lapsed_grant_id = u.gr
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(r, it, re, gr)
WHERE a.run_id = u.r AND a.item_id = u.it`

func queueAsks(b *pgx.Batch, p *batchPlan) {
	n := len(p.asks)
	if n == 0 {
		return
	}
	runs, items, reasons, grants := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, a := range p.asks {
		runs[i], items[i], reasons[i], grants[i] = a.key.runID, a.key.itemID, a.reason, a.grantID
	}
	b.Queue(setAsksSQL, runs, items, reasons, grants)
}
