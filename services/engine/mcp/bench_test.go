package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/engine/mcp"
	"github.com/xbot-runtime/xbot/services/engine/mcp/mcptest"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/engine/tools"
)

// BenchmarkRemoteCall is one echo call through a run's MCP tool (argument
// passing, the call, the result's conversion and scrubbing) over streamable
// HTTP on loopback; BenchmarkRemoteCallRawSDK is the same call with the SDK
// client alone, the baseline.
func BenchmarkRemoteCall(b *testing.B) {
	url, _ := mcptest.ServeHTTP(b)
	srv := profile.MCPServer{Name: "remote", URL: url, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}
	set := mcp.NewSet([]profile.MCPServer{srv}, mcp.Env{Log: zap.NewNop(), Secrets: mcp.NewSecrets(map[string]string{"TOKEN": secret})})
	b.Cleanup(set.Close)
	snap, err := mcp.List(context.Background(), set, srv)
	if err != nil {
		b.Fatal(err)
	}
	var echo profile.MCPTool
	for _, t := range snap.Tools {
		if t.Tool == "echo" {
			echo = t
		}
	}
	tool := mcp.NewTool(set, srv, echo, 16<<10)
	args := json.RawMessage(`{"text":"hello"}`)
	b.ResetTimer()
	for range b.N {
		if res := tool.Run(context.Background(), tools.Call{Arguments: args}); res.Output != "hello" {
			b.Fatalf("%+v", res)
		}
	}
}

func BenchmarkRemoteCallRawSDK(b *testing.B) {
	url, _ := mcptest.ServeHTTP(b)
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: http.DefaultClient}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = session.Close() })
	b.ResetTimer()
	for range b.N {
		if _, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}); err != nil {
			b.Fatal(err)
		}
	}
}
