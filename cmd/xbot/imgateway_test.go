package main_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/xbot-runtime/xbot/services/imgateway"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// chatOnce says hello on the sandbox endpoint url and waits for the demo
// agent's reply in the owner's private chat.
func chatOnce(t *testing.T, url, token string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url+"?token="+token, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	defer func() { _ = ws.CloseNow() }()
	if err := ws.Write(ctx, websocket.MessageText, []byte("hello from the dev test")); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("no reply on %s: %v", url, err)
		}
		var f wire.Frame
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		if f.Type == wire.TypePrivate && f.ID == imgateway.DefaultEndpoint.Owner {
			return
		}
		if f.Type == wire.TypeError {
			t.Fatalf("error frame %s", b)
		}
	}
}
