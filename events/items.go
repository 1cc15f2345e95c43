package events

import (
	"errors"
	"fmt"
)

func applyItem(n *RunState, e Envelope, p any) error {
	if e.ItemID == "" {
		return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("envelope itemId is required")}
	}
	if st, ok := p.(*ItemStartedPayload); ok {
		if _, exists := n.Item(e.ItemID); exists {
			return fmt.Errorf("item %s already exists", e.ItemID)
		}
		if st.ItemType == "" {
			return &PayloadError{Type: e.Type, Seq: e.Seq, Err: errors.New("itemType is required")}
		}
		n.Items = n.Items.appended(ItemRef{ID: e.ItemID, Type: st.ItemType, Status: ItemStatusStarted})
		return nil
	}
	idx := n.Items.index(e.ItemID)
	if idx < 0 {
		return fmt.Errorf("item %s was never started", e.ItemID)
	}
	it := n.Items.At(idx)
	if it.Status != ItemStatusStarted && it.Status != ItemStatusAwaitingApproval {
		return fmt.Errorf("item %s is already %s", e.ItemID, it.Status)
	}
	if _, delta := p.(*ItemDeltaPayload); delta {
		if it.Status != ItemStatusStarted {
			return fmt.Errorf("item %s is %s, not streaming", e.ItemID, it.Status)
		}
		return nil // a delta changes no item
	}
	switch v := p.(type) {
	case *ItemCompletedPayload:
		it.Status = ItemStatusCompleted
		if v.Status == ItemStatusTruncated {
			it.Status = ItemStatusTruncated
		}
	case *ItemFailedPayload:
		it.Status = ItemStatusFailed
	case *ItemAwaitingApprovalPayload:
		if it.Status != ItemStatusStarted {
			return fmt.Errorf("item %s already awaits approval", e.ItemID)
		}
		it.Status, it.ToolName, it.RuleID = ItemStatusAwaitingApproval, v.ToolName, v.RuleID
	}
	n.Items = n.Items.with(idx, it)
	return nil
}

// FailOpenItems returns the events that fail every open item of st with
// code and msg, so the run may end.
func FailOpenItems(st RunState, code, msg string) []Draft {
	var drafts []Draft
	for _, it := range st.OpenItems() {
		drafts = append(drafts, Draft{Type: ItemFailed, ItemID: it.ID,
			Payload: ItemFailedPayload{ItemType: it.Type, ErrorCode: code, Message: msg}})
	}
	return drafts
}
