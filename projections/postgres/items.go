package postgres

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/xbot-runtime/xbot/events"
)

// maxItemText bounds items.input and items.output, so that a page of items
// stays a few MiB at the largest page size. The full texts stay in
// run_events (the started event and the closing event of the item).
const maxItemText = 32 << 10

// itemKey names an item: item ids are unique within a run.
type itemKey struct{ runID, itemID string }

// itemChange is what one batch does to one items row. When inserted, the
// item started in this batch and the row is written whole; otherwise only
// the non-nil fields are set on the existing row (an item that never
// started has no row and stays without one).
type itemChange struct {
	key      itemKey
	inserted bool

	// Written only with an inserted row.
	tenantID, sessionID, typ, toolName, toolCallID, input string
	inputTruncated                                        bool
	startedSeq, startedAt                                 int64

	status *string
	// resolve: an approval decision arrived for an item whose status the
	// batch does not know; it returns the item to started if it is
	// awaiting approval, as events.Fold does.
	resolve                 bool
	output                  *string
	outputTruncated         bool // with output
	errorCode, errorMessage *string
	exitCode                *int32
	completedAt             *int64
	updatedSeq              int64
}

// applyItem plans the effect of a runtime.item.* event or an approval
// decision on the items read model. Events without an itemId change no item.
func (p *batchPlan) applyItem(e events.Envelope) error {
	if e.ItemID == "" {
		return nil
	}
	switch e.Type {
	case events.ItemStarted:
		return p.startItem(e)
	case events.ItemCompleted:
		return p.completeItem(e)
	case events.ItemFailed:
		v, err := p.itemFailed(e)
		if err != nil {
			return err
		}
		c := p.itemFor(e)
		c.setStatus(events.ItemStatusFailed)
		c.errorCode, c.errorMessage = ptr(clean(v.ErrorCode)), ptr(clean(v.Message))
		c.completedAt = ptr(e.OccurredAt)
	case events.ItemAwaitingApproval:
		p.itemFor(e).setStatus(events.ItemStatusAwaitingApproval)
	case events.ApprovalDecisionSubmitted:
		c := p.itemFor(e)
		switch {
		case c.status == nil:
			c.resolve = true
		case *c.status == events.ItemStatusAwaitingApproval:
			c.setStatus(events.ItemStatusStarted)
		}
	default:
		// Deltas stream text that the closing event repeats whole; no other
		// event type has an item.
	}
	return nil
}

func (p *batchPlan) startItem(e events.Envelope) error {
	v, err := payloadOf[events.ItemStartedPayload](e)
	if err != nil {
		return err
	}
	c := &itemChange{key: itemKey{e.RunID, e.ItemID}, inserted: true, tenantID: e.TenantID,
		sessionID: clean(e.PlatformSessionID), typ: clean(string(v.ItemType)), startedSeq: e.Seq, startedAt: e.OccurredAt, updatedSeq: e.Seq}
	c.setStatus(events.ItemStatusStarted)
	if v.ItemType.RunsTool() && len(v.Data) > 0 {
		var d events.ToolCallData
		if err := decodeData(e, v.Data, &d); err != nil {
			return err
		}
		c.toolName, c.toolCallID = clean(d.ToolName), clean(d.ToolCallID)
		c.input, c.inputTruncated = cut(d.Arguments)
	}
	if _, ok := p.items[c.key]; !ok {
		p.itemOrder = append(p.itemOrder, c.key)
	}
	p.items[c.key] = c
	return nil
}

func (p *batchPlan) completeItem(e events.Envelope) error {
	v, err := p.itemCompleted(e)
	if err != nil {
		return err
	}
	c := p.itemFor(e)
	status := events.ItemStatusCompleted
	if v.Status == events.ItemStatusTruncated {
		status = events.ItemStatusTruncated
	}
	c.setStatus(status)
	out, truncated := cut(v.Content)
	c.output, c.outputTruncated, c.completedAt = &out, truncated, ptr(e.OccurredAt)
	if v.ItemType.RunsTool() && len(v.Data) > 0 {
		var d events.ToolResultData
		if err := decodeData(e, v.Data, &d); err != nil {
			return err
		}
		if d.Exec != nil {
			c.exitCode = ptr(int32(d.Exec.ExitCode)) //nolint:gosec // exit codes are 0-255
		}
	}
	return nil
}

// itemFor returns the batch's change of e's item, adding an update of the
// stored row if the batch has none yet.
func (p *batchPlan) itemFor(e events.Envelope) *itemChange {
	k := itemKey{e.RunID, e.ItemID}
	c, ok := p.items[k]
	if !ok {
		c = &itemChange{key: k}
		p.items[k] = c
		p.itemOrder = append(p.itemOrder, k)
	}
	c.updatedSeq = e.Seq
	return c
}

func (c *itemChange) setStatus(s string) {
	c.status, c.resolve = &s, false
}

// durationMs is completedAt - startedAt for an inserted row that closed.
func (c *itemChange) durationMs() *int64 {
	if c.completedAt == nil {
		return nil
	}
	return ptr(*c.completedAt - c.startedAt)
}

// decodeData unmarshals an item's Data, reporting a *events.PayloadError.
func decodeData(e events.Envelope, data json.RawMessage, v any) error {
	if string(data) == "null" {
		return nil
	}
	if err := events.Unmarshal(data, v); err != nil {
		return &events.PayloadError{Type: e.Type, Seq: e.Seq, Err: err}
	}
	return nil
}

// cut returns s cleaned and cut to maxItemText bytes at a rune boundary, and
// whether it was cut.
func cut(s string) (string, bool) {
	s = clean(s)
	if len(s) <= maxItemText {
		return s, false
	}
	n := maxItemText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

func ptr[T any](v T) *T { return &v }
