package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/projections/im"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/imgateway/web"
)

// readModel is a session read model of the test: runs newest first, as the
// API lists them, and each run's items.
type readModel struct {
	runs  []client.Run
	items map[string][]client.Item
	err   error
}

func (m readModel) ListSessionRuns(_ context.Context, _ string, q client.RunQuery) (client.SessionRunPage, error) {
	if m.err != nil {
		return client.SessionRunPage{}, m.err
	}
	page := client.SessionRunPage{Runs: m.runs}
	if q.Limit > 0 && len(m.runs) > q.Limit {
		page.Runs, page.NextCursor = m.runs[:q.Limit], "more"
	}
	return page, nil
}

func (m readModel) AllItems(_ context.Context, runID string, _ client.Page) ([]client.Item, error) {
	return m.items[runID], nil
}

func ptr[T any](v T) *T { return &v }

// sessionOf maps a conversation as the test's gateway does.
func sessionOf(c web.Conversation) (string, error) {
	if strings.ContainsAny(c.ID, " /") {
		return "", errors.New("not a conversation id")
	}
	return "sbx-" + c.Type + "-" + c.ID, nil
}

// history serves HistoryHandler over model and GETs query with header h.
func history(t *testing.T, model readModel, query string, h http.Header) (int, web.History, []string) {
	t.Helper()
	var tokens, sessions []string
	handler, err := web.HistoryHandler(web.HistoryConfig{
		Sessions: func(token string) web.SessionReader { tokens = append(tokens, token); return model },
		SessionID: func(c web.Conversation) (string, error) {
			s, err := sessionOf(c)
			sessions = append(sessions, s)
			return s, err
		},
		MaxRuns: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/sandbox/history?"+query, nil)
	req.Header = h
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	var out web.History
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
	}
	return rec.Code, out, tokens
}

func conversationModel() readModel {
	return readModel{
		runs: []client.Run{ // newest first
			{RunID: "run_2", Input: client.UserInput{Content: "And again."}, CreatedAt: 3000},
			{RunID: "run_1", Input: client.UserInput{Content: "Deploy, please."}, CreatedAt: 1000},
		},
		items: map[string][]client.Item{
			"run_1": {
				{ItemID: "itm_r", RunID: "run_1", Type: "reasoning", Output: ptr("thinking")},
				{ItemID: "itm_a", RunID: "run_1", Type: "assistant_message", Status: "completed", Output: ptr("I will deploy."), StartedAt: 1100, StartedSeq: 1100, UpdatedSeq: 1150},
				{ItemID: "itm_t", RunID: "run_1", Type: "command_execution", Status: "completed", ToolName: "shell",
					Input: `{"command":"echo deploy"}`, Output: ptr("deploy\n"), ExitCode: ptr(0), StartedAt: 1200},
				{ItemID: "itm_u", RunID: "run_1", Type: "user_message", Status: "completed", Output: ptr("quickly"), StartedAt: 1300},
				{ItemID: "itm_b", RunID: "run_1", Type: "assistant_message", Status: "completed", Output: ptr("Done."), StartedAt: 1400},
			},
			"run_2": {{ItemID: "itm_q", RunID: "run_2", Type: "clarification_request", Status: "started", StartedAt: 3100}},
		},
	}
}

// TestHistoryIsTheSessionsMessagesOldestFirst: the runs' inputs, replies,
// steers, tool calls (with their output) and questions, in order; what is
// not a chat message is left out.
func TestHistoryIsTheSessionsMessagesOldestFirst(t *testing.T) {
	t.Parallel()
	code, h, tokens := history(t, conversationModel(), "type=direct&id=alice", http.Header{"Authorization": {"Bearer tok-1"}})
	if code != http.StatusOK || h.Type != "private" || h.ID != "alice" || h.PlatformSessionID != "sbx-private-alice" {
		t.Fatalf("GET history: %d %+v", code, h)
	}
	if !slices.Equal(tokens, []string{"tok-1"}) {
		t.Errorf("the read model was read with %v, want the request's bearer token", tokens)
	}
	var got []string
	for _, m := range h.Messages {
		seg := m.Content[0]
		text, _ := seg.Data["text"].(string)
		if seg.Type == "tool" {
			text = seg.Data["name"].(string) + "=" + seg.Data["output"].(string)
		}
		got = append(got, m.From+":"+text)
	}
	want := []string{"user:Deploy, please.", "bot:I will deploy.", "bot:shell=deploy\n", "user:quickly", "bot:Done.",
		"user:And again.", "bot:(a question waits for your answer)"}
	if !slices.Equal(got, want) {
		t.Errorf("history\n got %q\nwant %q", got, want)
	}
	// The reply's completion is the event its outbox message came from.
	if id := h.Messages[1].MessageID; id != im.MessageID("run_1", 1150) {
		t.Errorf("the reply's messageId %q, want its outbox message's", id)
	}
}

func TestHistoryOfASessionWithoutRunsIsEmpty(t *testing.T) {
	t.Parallel()
	model := readModel{err: &client.Problem{Status: http.StatusNotFound, Code: "not_found"}}
	code, h, tokens := history(t, model, "id=bob&token=tok-q", http.Header{})
	if code != http.StatusOK || len(h.Messages) != 0 || h.Messages == nil {
		t.Errorf("GET history of a new session: %d %+v, want 200 and no messages", code, h)
	}
	if !slices.Equal(tokens, []string{"tok-q"}) {
		t.Errorf("the read model was read with %v, want the ?token= query", tokens)
	}
}

func TestHistoryShowsTheLatestRunsOnly(t *testing.T) {
	t.Parallel()
	model := conversationModel()
	model.runs = append([]client.Run{{RunID: "run_3", Input: client.UserInput{Content: "Third."}}}, model.runs...)
	_, h, _ := history(t, model, "id=alice", http.Header{"Authorization": {"Bearer t"}})
	if !h.Truncated || h.Messages[0].RunID != "run_2" {
		t.Errorf("history of three runs with MaxRuns 2: truncated %v, first %+v", h.Truncated, h.Messages[0])
	}
}

// TestHistoryRefusals: no credential, no conversation id, an id the
// gateway cannot map, the API's refusal, and another failure of the read.
func TestHistoryRefusals(t *testing.T) {
	t.Parallel()
	bearer := http.Header{"Authorization": {"Bearer t"}}
	for _, tc := range []struct {
		name  string
		model readModel
		query string
		h     http.Header
		want  int
	}{
		{"no token", conversationModel(), "id=alice", http.Header{}, http.StatusUnauthorized},
		{"no id", conversationModel(), "type=group", bearer, http.StatusBadRequest},
		{"unmappable id", conversationModel(), "id=a%20b", bearer, http.StatusBadRequest},
		{"API refuses", readModel{err: &client.Problem{Status: http.StatusForbidden}}, "id=alice", bearer, http.StatusForbidden},
		{"API fails", readModel{err: errors.New("connection refused")}, "id=alice", bearer, http.StatusBadGateway},
	} {
		if code, _, _ := history(t, tc.model, tc.query, tc.h); code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.want)
		}
	}
}

func TestHistoryConfigNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	_, err := web.HistoryHandler(web.HistoryConfig{})
	if err == nil || !strings.Contains(err.Error(), "Sessions") || !strings.Contains(err.Error(), "SessionID") {
		t.Errorf("HistoryHandler of an empty config: %v", err)
	}
}
