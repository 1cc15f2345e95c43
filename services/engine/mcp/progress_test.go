package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// chattyServer is a Go SDK server whose tool sends three progress
// notifications, then its answer.
func chattyServer(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "chatty", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "chatty"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		for i := range 3 {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
				Progress: float64(i + 1), Total: 3})
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestNoProgressIsDeliveredAfterTheCallReturned: the SDK hands
// notifications to the client apart from answers, so one sent before the
// answer may be handled after it; the agent loop has closed the call's item
// by then, where a progress delta is refused. Here the first notification's
// delivery is held until the call returned (for at most 2 s): a call that
// waits for the delivery under way returns after it, and later ones are
// dropped.
func TestNoProgressIsDeliveredAfterTheCallReturned(t *testing.T) {
	t.Parallel()
	srv := profile.MCPServer{Name: "chatty", URL: chattyServer(t)}
	set := mcp.NewSet([]profile.MCPServer{srv}, env(t))
	t.Cleanup(set.Close)
	chatty := tool(t, set, srv, "chatty", 1<<10)
	returned, firstDone := make(chan struct{}), make(chan struct{})
	var calls, late atomic.Int32
	res := chatty.Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{}`), Output: func(_, _ string) {
		if calls.Add(1) == 1 {
			defer close(firstDone)
			select {
			case <-returned:
			case <-time.After(2 * time.Second):
			}
		}
		select {
		case <-returned:
			late.Add(1)
		default:
		}
	}})
	close(returned)
	if res.Output != "done" {
		t.Fatalf("chatty = %+v", res)
	}
	if calls.Load() > 0 {
		<-firstDone
	}
	if n := late.Load(); n > 0 {
		t.Fatalf("%d progress notifications were delivered after the call returned", n)
	}
}
