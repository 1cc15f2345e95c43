package imgateway

import (
	"net/http"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway/web"
	"github.com/xbot-runtime/xbot/services/imgateway/wire"
)

// historySuffix is the path, below an endpoint's, of its chat page's
// history (web.HistoryHandler).
const historySuffix = "/history"

// servePage answers GET of an endpoint's path with the chat page
// (web.Files: everything it loads is inline).
func servePage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFileFS(w, r, web.Files, web.Page)
}

// historyHandler is the handler of GET <endpoint path>/history for the
// endpoint named name: a conversation of the endpoint, read from the
// session's runs through the API with the caller's own token, its session id
// mapped as inbound messages map it. Made once per mount.
func (g *Gateway) historyHandler(name string) (http.Handler, error) {
	return web.HistoryHandler(web.HistoryConfig{
		Sessions: func(token string) web.SessionReader { return g.cfg.API.WithToken(token) },
		SessionID: func(c web.Conversation) (string, error) {
			return wire.SessionID(wire.Conversation{Endpoint: name, Type: c.Type, ID: c.ID})
		},
		Logger: g.log.Named("history"),
	})
}

var _ web.SessionReader = (*client.Client)(nil)
