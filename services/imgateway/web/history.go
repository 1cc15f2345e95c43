package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// SessionReader reads a platform session's runs and their items as one
// principal. *client.Client implements it.
type SessionReader interface {
	ListSessionRuns(ctx context.Context, sessionID string, q client.RunQuery) (client.SessionRunPage, error)
	AllItems(ctx context.Context, runID string, p client.Page) ([]client.Item, error)
}

// Conversation is a chat of an endpoint: its type (private, group or
// channel; direct and guild already mapped) and id.
type Conversation struct {
	Type string
	ID   string
}

// HistoryConfig configures HistoryHandler.
type HistoryConfig struct {
	// Sessions returns the reader acting with a request's credential, e.g.
	// func(t string) SessionReader { return apiClient.WithToken(t) }. Required.
	Sessions func(token string) SessionReader
	// SessionID maps a conversation of the endpoint to its platformSessionId;
	// an error answers 400. Required.
	SessionID func(Conversation) (string, error)
	// MaxRuns bounds how many of the session's latest runs are read.
	// Default 20: a page shows the recent conversation, not all of it.
	MaxRuns int
	// Logger logs failed reads (never the credential). Default: none.
	Logger *zap.Logger
}

// defaultMaxRuns is HistoryConfig.MaxRuns' default.
const defaultMaxRuns = 20

func (c *HistoryConfig) setDefaults() {
	if c.MaxRuns <= 0 {
		c.MaxRuns = defaultMaxRuns
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
}

// Validate reports every problem of the config.
func (c HistoryConfig) Validate() error {
	var errs []error
	if c.Sessions == nil {
		errs = append(errs, errors.New("web: HistoryConfig.Sessions is required"))
	}
	if c.SessionID == nil {
		errs = append(errs, errors.New("web: HistoryConfig.SessionID is required"))
	}
	return errors.Join(errs...)
}

// History is the answer of GET <mount path>/history.
type History struct {
	Type              string `json:"type"`
	ID                string `json:"id"`
	PlatformSessionID string `json:"platformSessionId"`
	// Messages are oldest first.
	Messages []Entry `json:"messages"`
	// Truncated says older runs of the session are not shown.
	Truncated bool `json:"truncated,omitempty"`
}

// HistoryHandler returns the handler of GET <mount path>/history?type=&id=
// (type defaults to private; direct and guild are private and channel). The
// credential is the request's bearer token or its ?token= query, as on the
// socket; the API decides what it may read (a 401 or 403 passes through).
// A session that has no run yet has an empty history.
func HistoryHandler(cfg HistoryConfig) (http.Handler, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &historyHandler{cfg: cfg}, nil
}

type historyHandler struct{ cfg HistoryConfig }

func (h *historyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "use GET")
		return
	}
	token := Token(r)
	if token == "" {
		writeError(w, http.StatusUnauthorized, "a token is required (Authorization: Bearer or ?token=)")
		return
	}
	conv := Conversation{Type: ConversationType(r.URL.Query().Get("type")), ID: r.URL.Query().Get("id")}
	if conv.ID == "" {
		writeError(w, http.StatusBadRequest, "id (the conversation's id) is required")
		return
	}
	sessionID, err := h.cfg.SessionID(conv)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("conversation %s %q: %v", conv.Type, conv.ID, err))
		return
	}
	hist, err := h.read(r.Context(), h.cfg.Sessions(token), sessionID)
	if err != nil {
		h.fail(w, sessionID, err)
		return
	}
	hist.Type, hist.ID = conv.Type, conv.ID
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(hist)
}

// read reads the session's latest runs, oldest first, and their items.
func (h *historyHandler) read(ctx context.Context, rd SessionReader, sessionID string) (History, error) {
	hist := History{PlatformSessionID: sessionID, Messages: []Entry{}}
	page, err := rd.ListSessionRuns(ctx, sessionID, client.RunQuery{Page: client.Page{Limit: h.cfg.MaxRuns}})
	var p *client.Problem
	if errors.As(err, &p) && p.Status == http.StatusNotFound {
		return hist, nil // no run yet
	}
	if err != nil {
		return hist, fmt.Errorf("list runs of session %s: %w", sessionID, err)
	}
	hist.Truncated = page.NextCursor != ""
	runs := slices.Clone(page.Runs)
	slices.Reverse(runs)
	for _, run := range runs {
		items, err := rd.AllItems(ctx, run.RunID, client.Page{})
		if err != nil {
			return hist, fmt.Errorf("items of run %s: %w", run.RunID, err)
		}
		hist.Messages = append(hist.Messages, RunEntries(run, items)...)
	}
	return hist, nil
}

// fail answers a failed read: the API's refusals (401, 403) pass through,
// anything else is a 502. The credential is never logged.
func (h *historyHandler) fail(w http.ResponseWriter, sessionID string, err error) {
	var p *client.Problem
	if errors.As(err, &p) && (p.Status == http.StatusUnauthorized || p.Status == http.StatusForbidden) {
		writeError(w, p.Status, p.Detail)
		return
	}
	h.cfg.Logger.Warn("sandbox history read failed", zap.String("platform_session_id", sessionID), zap.Error(err))
	writeError(w, http.StatusBadGateway, "the session's history could not be read")
}

// Token returns a request's credential: its bearer token, else its ?token=
// query.
func Token(r *http.Request) string {
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return r.URL.Query().Get("token")
}

// ConversationType normalizes a conversation type as the wire protocol
// does: empty is private, direct is private, guild is channel.
func ConversationType(t string) string {
	switch t {
	case "", "direct":
		return "private"
	case "guild":
		return "channel"
	}
	return t
}

func writeError(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": detail})
}
