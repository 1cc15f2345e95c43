package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Item is one row of the items read model: a RuntimeItem as its events
// leave it (deltas excluded).
type Item struct {
	RunID      string `json:"runId"`
	ItemID     string `json:"itemId"`
	TenantID   string `json:"tenantId"`
	Type       string `json:"type"`
	Status     string `json:"status"`     // started | awaiting_approval | completed | truncated | failed
	StartedSeq int64  `json:"startedSeq"` // seq of runtime.item.started
	UpdatedSeq int64  `json:"updatedSeq"` // seq of the latest event that changed the item
	ToolName   string `json:"toolName,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Input is the tool call's arguments as the model wrote them, cut to
	// 32 KiB (InputTruncated); the event at StartedSeq has them whole.
	Input          string `json:"input,omitempty"`
	InputTruncated bool   `json:"inputTruncated,omitempty"`
	// Output is the content of the closing event (nil while open), cut to
	// 32 KiB (OutputTruncated); the event at UpdatedSeq has it whole.
	Output          *string    `json:"output,omitempty"`
	OutputTruncated bool       `json:"outputTruncated,omitempty"`
	ErrorCode       string     `json:"errorCode,omitempty"`
	ErrorMessage    string     `json:"errorMessage,omitempty"`
	ExitCode        *int       `json:"exitCode,omitempty"` // command_execution only
	StartedAt       time.Time  `json:"startedAt"`
	CompletedAt     *time.Time `json:"completedAt,omitempty"`
	DurationMs      *int64     `json:"durationMs,omitempty"` // CompletedAt - StartedAt
}

// ItemFilter selects the items of one run, in log order.
type ItemFilter struct {
	TenantID string // required
	RunID    string // required
	// After is an opaque cursor returned by the previous page ("" = first page).
	After string
	Limit int
}

// Page sizes of items and approvals: an item carries up to 64 KiB of text
// and an approval its tool input, so pages are smaller than runs pages.
const (
	defaultItemLimit = 50
	maxItemLimit     = 200
)

const itemColumnsSQL = `run_id, item_id, tenant_id, type, status, started_seq, updated_seq, tool_name,
	tool_call_id, input, input_truncated, output, output_truncated, error_code, error_message, exit_code,
	started_at, completed_at, duration_ms`

func scanItem(row pgx.CollectableRow) (Item, error) {
	var it Item
	var exit *int32
	err := row.Scan(&it.RunID, &it.ItemID, &it.TenantID, &it.Type, &it.Status, &it.StartedSeq, &it.UpdatedSeq,
		&it.ToolName, &it.ToolCallID, &it.Input, &it.InputTruncated, &it.Output, &it.OutputTruncated,
		&it.ErrorCode, &it.ErrorMessage, &exit, &it.StartedAt, &it.CompletedAt, &it.DurationMs)
	if exit != nil {
		it.ExitCode = ptr(int(*exit))
	}
	it.StartedAt = it.StartedAt.UTC()
	if it.CompletedAt != nil {
		it.CompletedAt = ptr(it.CompletedAt.UTC())
	}
	return it, err
}

// ListItems returns a page of the items of run f.RunID of tenant f.TenantID
// in log order (by the seq of their started event), and the cursor of the
// next page ("" on the last page). A run unknown to the tenant has no
// items. f.Limit <= 0 means 50; at most 200. A cursor not issued by
// ListItems yields ErrInvalidCursor.
func (s *Queries) ListItems(ctx context.Context, f ItemFilter) ([]Item, string, error) {
	if f.TenantID == "" || f.RunID == "" {
		return nil, "", errors.New("list items: tenant id and run id are required")
	}
	after := int64(0)
	if f.After != "" {
		c, err := decodeKeyCursor(f.After, itemCursorKind)
		if err != nil {
			return nil, "", fmt.Errorf("list items of run %s: %w", f.RunID, err)
		}
		after = c.Seq
	}
	limit := clampLimit(f.Limit, defaultItemLimit, maxItemLimit)
	rows, err := s.pool.Query(ctx, "SELECT "+itemColumnsSQL+` FROM items
WHERE tenant_id = $1 AND run_id = $2 AND started_seq > $3 ORDER BY started_seq LIMIT $4`,
		f.TenantID, f.RunID, after, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list items of run %s: %w", f.RunID, err)
	}
	items, err := pgx.CollectRows(rows, scanItem)
	if err != nil {
		return nil, "", fmt.Errorf("list items of run %s: %w", f.RunID, err)
	}
	if len(items) <= limit {
		return items, "", nil
	}
	items = items[:limit]
	return items, keyCursor{Kind: itemCursorKind, Seq: items[limit-1].StartedSeq}.encode(), nil
}
