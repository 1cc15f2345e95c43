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
		n.Items = append(n.Items, ItemRef{ID: e.ItemID, Type: st.ItemType, Status: ItemStatusStarted})
		return nil
	}
	idx := -1
	for i := len(n.Items) - 1; i >= 0; i-- { // the item an event is of is most often the latest
		if n.Items[i].ID == e.ItemID {
			idx = i
			break
		}
	}
	if idx < 0 {
		return fmt.Errorf("item %s was never started", e.ItemID)
	}
	if st := n.Items[idx].Status; st != ItemStatusStarted && st != ItemStatusAwaitingApproval {
		return fmt.Errorf("item %s is already %s", e.ItemID, st)
	}
	if _, delta := p.(*ItemDeltaPayload); delta {
		if st := n.Items[idx].Status; st != ItemStatusStarted {
			return fmt.Errorf("item %s is %s, not streaming", e.ItemID, st)
		}
		return nil // a delta changes no item
	}
	n.ownItems()
	it := &n.Items[idx]
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
