//go:build browser

package browser_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway"
	"github.com/xbot-runtime/xbot/services/imgateway/web"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

func init() { imGateway = startGateway }

// startGateway serves services/imgateway's gateway of sys with one endpoint
// (the default, at /sandbox), the chat page of web.Files on GET of its path
// and web.HistoryHandler at /sandbox/history, its conversations mapped to
// session ids as the gateway maps them (wire.SessionID).
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
	ep := imgateway.DefaultEndpoint
	history, err := web.HistoryHandler(web.HistoryConfig{
		Sessions: func(token string) web.SessionReader { return api.WithToken(token) },
		SessionID: func(c web.Conversation) (string, error) {
			return wire.SessionID(wire.Conversation{Endpoint: ep.ID, Type: c.Type, ID: c.ID})
		},
		Logger: sys.Logger.Named("history"),
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /sandbox/history", history)
	mux.HandleFunc("/sandbox", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.ServeFileFS(w, r, web.Files, web.Page)
			return
		}
		gw.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { gw.Close(); srv.Close() })
	return srv.URL + "/sandbox"
}
