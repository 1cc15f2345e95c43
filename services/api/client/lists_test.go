package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/api/client"
)

func TestListRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		call func(*client.Client) error
		uri  string
	}{
		{"items, first page", func(c *client.Client) error {
			_, err := c.ListItems(ctx, "run_1", client.Page{})
			return err
		}, "/v1/runs/run_1/items"},
		{"items, next page", func(c *client.Client) error {
			_, err := c.ListItems(ctx, "run_1", client.Page{Cursor: "c2", Limit: 100})
			return err
		}, "/v1/runs/run_1/items?cursor=c2&limit=100"},
		{"pending approvals of a run", func(c *client.Client) error {
			_, err := c.ListApprovals(ctx, client.ApprovalQuery{Status: client.ApprovalPending, RunID: "run_1"})
			return err
		}, "/v1/approvals?runId=run_1&status=pending"},
		{"runs of a session in a state", func(c *client.Client) error {
			_, err := c.ListRuns(ctx, client.RunQuery{PlatformSessionID: "s 1", Status: "completed", Page: client.Page{Limit: 5}})
			return err
		}, "/v1/runs?limit=5&platformSessionId=s+1&status=completed"},
		{"a session's runs", func(c *client.Client) error {
			_, err := c.ListSessionRuns(ctx, "s/1", client.RunQuery{PlatformSessionID: "ignored"})
			return err
		}, "/v1/sessions/s%2F1/runs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, got := fakeAPI(t, 200, `{}`)
			if err := tc.call(c); err != nil {
				t.Fatal(err)
			}
			if got.method != "GET" || got.uri != tc.uri || got.auth != "Bearer tok" {
				t.Errorf("sent %s %s (%s), want GET %s", got.method, got.uri, got.auth, tc.uri)
			}
		})
	}
}

// pagedAPI answers GET /v1/runs/run_1/items from pages keyed by cursor.
func pagedAPI(t *testing.T, pages map[string]string) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Query().Get("cursor")]
		if !ok {
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = w.Write([]byte(`{"status":422,"title":"Unprocessable Entity","code":"validation_failed"}`))
			return
		}
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAllItemsFollowsTheCursor(t *testing.T) {
	t.Parallel()
	c := pagedAPI(t, map[string]string{
		"":   `{"items":[{"itemId":"a"},{"itemId":"b"}],"nextCursor":"c2"}`,
		"c2": `{"items":[{"itemId":"c"}]}`,
	})
	its, err := c.AllItems(context.Background(), "run_1", client.Page{})
	if err != nil || len(its) != 3 || its[2].ItemID != "c" {
		t.Fatalf("AllItems = %+v, %v", its, err)
	}
	loop := pagedAPI(t, map[string]string{"": `{"items":[],"nextCursor":"c"}`, "c": `{"items":[],"nextCursor":"c"}`})
	if _, err := loop.AllItems(context.Background(), "run_1", client.Page{}); err == nil || !strings.Contains(err.Error(), "again as the next") {
		t.Errorf("a page naming itself as the next: %v, want an error", err)
	}
}

func TestEventPagesStopWhenAPageDoesNotMoveOn(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"events":[{"seq":1}],"nextAfterSeq":0}`))
	}))
	t.Cleanup(srv.Close)
	c, _ := client.New(client.Config{BaseURL: srv.URL})
	err := c.EventPages(context.Background(), "run_1", 0, 0, func(client.EventPage) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "nextAfterSeq 0") {
		t.Fatalf("EventPages = %v, want an error naming the page that did not move on", err)
	}
}

func TestDecodePayloadReadsOnlyTheRegisteredType(t *testing.T) {
	t.Parallel()
	raw, _ := json.Marshal(events.ItemFailedPayload{ItemType: events.ItemToolCall, ErrorCode: "unknown_tool"})
	ev := client.Event{RunID: "run_1", Seq: 4, Type: events.ItemFailed, Payload: raw}
	p, err := client.DecodePayload[events.ItemFailedPayload](ev)
	if err != nil || p.ErrorCode != "unknown_tool" || p.ItemType != events.ItemToolCall {
		t.Fatalf("DecodePayload = %+v, %v", p, err)
	}
	if _, err := client.DecodePayload[events.ItemCompletedPayload](ev); err == nil {
		t.Error("decoded runtime.item.failed as an ItemCompletedPayload")
	}
	ev.Payload = json.RawMessage(`{"errorCode":7}`)
	var perr *events.PayloadError
	if _, err := client.DecodePayload[events.ItemFailedPayload](ev); !errors.As(err, &perr) || perr.Seq != 4 {
		t.Errorf("undecodable payload: %v, want an events.PayloadError", err)
	}
}
