package uistream_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/projections/uistream"
	"github.com/xbot-runtime/xbot/projections/uistream/nodecheck"
)

// TestAISDKAcceptsEveryGoldenStream serves each golden run through the real
// streaming path (Streamer over HTTP) and has the AI SDK read it; the
// annotated golden files themselves are checked too.
func TestAISDKAcceptsEveryGoldenStream(t *testing.T) {
	t.Parallel()
	s := newStreamer(t, newHub(t, 64), uistream.StreamConfig{})
	sources := map[string]*memSource{}
	for name, build := range goldenCases {
		evs := build(t)
		sources[name] = newMemSource()
		sources[name].put(evs, len(evs))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		src := sources[strings.TrimPrefix(r.URL.Path, "/")]
		if src == nil {
			http.NotFound(w, r)
			return
		}
		uistream.SetHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
		if err := s.Run(r.Context(), uistream.HTTPSink(w), src, "acme", runA, uistream.Position{}); err != nil {
			t.Errorf("%s: %v", r.URL.Path, err)
		}
	}))
	t.Cleanup(srv.Close)

	names := slices.Sorted(maps.Keys(goldenCases))
	var targets []nodecheck.Target
	for _, name := range names {
		targets = append(targets, nodecheck.Target{URL: srv.URL + "/" + name},
			nodecheck.Target{File: filepath.Join("testdata", name+".sse")})
	}
	checked := nodecheck.Check(t, 30*time.Second, nil, targets...)
	results := map[string]nodecheck.Result{}
	for i, name := range names {
		results[name] = checked[2*i]
	}
	tool := func(name, id string) nodecheck.Part {
		t.Helper()
		for _, p := range results[name].Messages[0].Parts {
			if p.ToolCallID == id {
				return p
			}
		}
		t.Fatalf("%s: no tool part %s", name, id)
		return nodecheck.Part{}
	}
	for _, c := range []struct{ name, id, state string }{
		{"approval_allowed", tool1, "output-available"},
		{"approval_denied", tool1, "output-denied"},
		{"cancelled_while_awaiting_approval", tool1, "output-error"},
		{"clarification", tool1, "output-available"},
		{"tools", tool1, "output-available"},
		{"tools", tool3, "output-error"},
		{"approvals_decided_one_by_one", tool1, "output-available"},
		{"approvals_decided_one_by_one", tool2, "output-denied"},
		{"approval_grant_covers_sibling", tool2, "output-available"},
		{"blocked_by_policy", tool1, "output-error"},
		{"expired_awaiting_approval", tool1, "output-error"},
		{"expired_awaiting_approval", tool2, "output-error"},
	} {
		if p := tool(c.name, c.id); p.Type != "dynamic-tool" || p.State != c.state {
			t.Errorf("%s: tool part %s is %s/%s, want dynamic-tool/%s", c.name, c.id, p.Type, p.State, c.state)
		}
	}
	if p := tool("approval_allowed", tool1); !strings.Contains(string(p.Approval), `"id":"itm_tool1"`) ||
		!strings.Contains(string(p.Approval), `"ruleId":"destructive-shell"`) {
		t.Errorf("the approved part has approval %s, want id itm_tool1 and the rule in its descriptor", p.Approval)
	}
	for name, r := range results {
		if len(r.Messages) != 1 || r.Messages[0].ID != runA {
			t.Errorf("%s: messages %+v, want one with id %s", name, r.Messages, runA)
			continue
		}
		var meta uistream.Metadata
		if err := json.Unmarshal(r.Messages[0].Metadata, &meta); err != nil || meta.ResponseID != runA || meta.Outcome == "" {
			t.Errorf("%s: metadata %s (%v)", name, r.Messages[0].Metadata, err)
		}
	}
}
