//go:build browser

package browser_test

import (
	"net/http/httptest"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

func init() { imGateway = startGateway }

// startGateway serves services/imgateway's gateway of sys with one endpoint
// (the default, at /sandbox): its chat page on GET of the path, its history
// at /sandbox/history and its socket, all from the gateway itself.
func startGateway(t *testing.T, sys imSystem) string {
	t.Helper()
	api, err := client.New(client.Config{BaseURL: "http://" + sys.Stack.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := imgateway.New(imgateway.Config{API: api, Kafka: sys.Kafka, AgentID: sys.Agent,
		ShellIsolation: wire.ShellIsolation{Available: true, Provider: "bwrap"}, Logger: sys.Logger.Named("im")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw) // the chat page, its history and the socket, as xbot im-gateway serves them
	t.Cleanup(func() { gw.Close(); srv.Close() })
	return srv.URL + "/sandbox"
}
