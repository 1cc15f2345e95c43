package systemtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
	"github.com/xbot-runtime/xbot/projections/uistream/nodecheck"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/engine/policy"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// startStreams gives the stack's API the UI stream endpoints: one tail of
// the events topic feeding one hub, as an API instance runs them.
func startStreams(t *testing.T, _ *env, st *stack.Stack) {
	t.Helper()
	select {
	case <-st.StreamsReady():
	case <-time.After(10 * time.Second):
		t.Fatal("the stream tail never became ready")
	}
}

// openStream starts a stream request; the caller reads and closes the body.
func openStream(ctx context.Context, t *testing.T, st *stack.Stack, path, tok string, hdr ...string) *http.Response {
	t.Helper()
	resp, err := apiClient(t, st, tok, nil).Send(ctx, http.MethodGet, path, nil, hdr...)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readRunStream reads a run stream (query appended to its path) to its end
// and returns it without keep-alive comments.
func readRunStream(t *testing.T, st *stack.Stack, runID, query string, hdr ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := openStream(ctx, t, st, "/v1/runs/"+runID+"/stream"+query, token, hdr...)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Vercel-Ai-Ui-Message-Stream") != "v1" ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream of %s: HTTP %d %v", runID, resp.StatusCode, resp.Header)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(raw), ": keep-alive\n\n", "")
}

func TestUIStreamOfARunWithTools(t *testing.T) {
	t.Parallel()
	slow := func(text string) profile.Turn {
		return profile.Turn{Text: text, ChunkChars: 4, Delay: 25 * time.Millisecond}
	}
	first := slow("Let me write the notes.")
	first.Reasoning = "The user wants notes."
	first.ToolCalls = []profile.ScriptedCall{
		{Name: "shell", Arguments: `{"command":"echo hi from shell"}`},
		{Name: "write_file", Arguments: `{"path":"notes.md","content":"one\ntwo\n"}`},
	}
	agent := profile.Profile{ID: "writer", Model: profile.ModelScripted, Tools: allTools, Limits: profile.Limits{ToolConcurrency: 1},
		Script: []profile.Turn{first, {ToolCalls: call1("read_file", `{"path":"notes.md"}`)}, slow("All done, the notes are written.")}}
	e, st, _ := agentEnv(t, agent)
	startStreams(t, e, st)
	runID := create(t, st, "writer", "write notes", "ui-tools-1").RunID

	live := readLive(t, st, runID)
	waitStatus(t, st, runID, "completed", 10*time.Second)
	replay := readRunStream(t, st, runID, "")
	if live != replay {
		t.Fatalf("the live stream differs from the replay:\nlive:\n%s\nreplay:\n%s", live, replay)
	}
	for _, want := range []string{`"type":"reasoning-delta"`, `"type":"tool-input-available"`, `"toolName":"shell"`,
		`"type":"data-file-changes"`, `"type":"tool-output-available"`, `"finishReason":"stop"`, "data: [DONE]"} {
		if !strings.Contains(replay, want) {
			t.Errorf("the stream lacks %s", want)
		}
	}

	// Resuming at an id, or after an event's seq, gives exactly the rest.
	ids := sseIDs(replay)
	for _, id := range []string{ids[1], ids[len(ids)/2], ids[len(ids)-1]} {
		if got, want := readRunStream(t, st, runID, "", "Last-Event-ID", id), afterID(t, replay, id); got != want {
			t.Errorf("resume at %s:\n got %q\nwant %q", id, got, want)
		}
		if seq, _, part := strings.Cut(id, "."); !part {
			if got, want := readRunStream(t, st, runID, "?afterSeq="+seq), afterID(t, replay, id); got != want {
				t.Errorf("afterSeq=%s:\n got %q\nwant %q", seq, got, want)
			}
		}
	}

	checkStreamErrors(t, st, runID)

	res := nodecheck.Check(t, 30*time.Second, http.Header{"Authorization": {"Bearer " + token}},
		nodecheck.Target{URL: "http://" + st.Addr() + "/v1/runs/" + runID + "/stream"})
	parts := res[0].Messages[0].Parts
	tools := 0
	for _, p := range parts {
		if p.Type == "dynamic-tool" {
			tools++
			if p.State != "output-available" {
				t.Errorf("tool part %s is %s", p.ToolName, p.State)
			}
		}
	}
	if tools != 3 || res[0].Messages[0].ID != runID {
		t.Errorf("the SDK built message %s with %d tool parts, want %s with 3", res[0].Messages[0].ID, tools, runID)
	}
}

// readLive reads a run's stream from before the run ends to its end.
func readLive(t *testing.T, st *stack.Stack, runID string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := openStream(ctx, t, st, "/v1/runs/"+runID+"/stream", token)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	first := readUntil(t, br, `"type":"start"`)
	if getRun(t, st, runID).Status == "completed" {
		t.Fatal("the run completed before its stream began: nothing was live")
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(first+string(rest), ": keep-alive\n\n", "")
}

// checkStreamErrors: another tenant's run is not found; a foreign id is refused.
func checkStreamErrors(t *testing.T, st *stack.Stack, runID string) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []struct {
		path, tok string
		hdr       []string
		code      int
	}{
		{"/v1/runs/" + runID + "/stream", "tok-other", nil, http.StatusNotFound},
		{"/v1/runs/run_nope/stream", token, nil, http.StatusNotFound},
		{"/v1/runs/" + runID + "/stream", token, []string{"Last-Event-ID", "run_x:3"}, http.StatusUnprocessableEntity},
		{"/v1/sessions/no-such-session/stream", token, nil, http.StatusNotFound},
		{"/v1/runs/" + runID + "/stream", "", nil, http.StatusUnauthorized},
	} {
		resp := openStream(ctx, t, st, c.path, c.tok, c.hdr...)
		_ = resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("GET %s (token %q, %v): HTTP %d, want %d", c.path, c.tok, c.hdr, resp.StatusCode, c.code)
		}
	}
}

func TestUIStreamOfASessionFollowsItsNextRun(t *testing.T) {
	t.Parallel()
	agent := profile.Profile{ID: "chat", Model: profile.ModelScripted, Script: []profile.Turn{{Text: "You said: {{input}}"}}}
	e, st, _ := agentEnv(t, agent)
	startStreams(t, e, st)
	first := createRun(t, apiOf(t, st), client.CreateRunRequest{AgentID: "chat", Input: client.UserInput{Content: "first"},
		PlatformSessionID: "sess-ui"}, "ui-session-1").RunID
	waitStatus(t, st, first, "completed", 10*time.Second)

	// Every reply has ended: the stream shows nothing old and waits.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := openStream(ctx, t, st, "/v1/sessions/sess-ui/stream", token)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("session stream: HTTP %d", resp.StatusCode)
	}
	res := input(t, st, first, "follow_up", "second", "ui-session-2")
	next, followUp := res.CreatedRunID, "ui-session-2" // the follow-up's input id: its Idempotency-Key

	got := readUntil(t, resp.Body, `"status":"idle"`) // the reply's last chunk
	waitStatus(t, st, next, "completed", 10*time.Second)
	want := strings.ReplaceAll("\n"+readRunStream(t, st, next, ""), "\nid: ", "\nid: "+next+":")[1:]
	if want = strings.TrimSuffix(want, "data: [DONE]\n\n"); got != want {
		t.Fatalf("session stream:\n%s\nwant the next run's reply:\n%s", got, want)
	}
	var start struct {
		MessageMetadata uistream.Metadata `json:"messageMetadata"`
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(l, `data: {"type":"start"`) {
			_ = json.Unmarshal([]byte(strings.TrimPrefix(l, "data: ")), &start)
			break
		}
	}
	if start.MessageMetadata.ResponseID != next || len(start.MessageMetadata.InputIDs) != 1 || start.MessageMetadata.InputIDs[0] != followUp {
		t.Errorf("start metadata %+v, want response %s answering the follow-up %s", start.MessageMetadata, next, followUp)
	}
}

// readUntil reads SSE frames from r until one contains marker; keep-alive
// comments are dropped.
func readUntil(t *testing.T, r io.Reader, marker string) string {
	t.Helper()
	var out strings.Builder
	br := bufio.NewReader(r)
	for {
		frame, err := readFrame(br)
		if err != nil {
			t.Fatalf("reading the stream: %v (so far %q)", err, out.String())
		}
		if frame == ": keep-alive\n\n" {
			continue
		}
		out.WriteString(frame)
		if strings.Contains(frame, marker) {
			return out.String()
		}
	}
}

func readFrame(br *bufio.Reader) (string, error) {
	var f strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return f.String(), err
		}
		f.WriteString(line)
		if line == "\n" {
			return f.String(), nil
		}
	}
}

func sseIDs(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if id, ok := strings.CutPrefix(l, "id: "); ok {
			out = append(out, id)
		}
	}
	return out
}

// afterID returns the frames of stream after the one with id.
func afterID(t *testing.T, stream, id string) string {
	t.Helper()
	frames := strings.SplitAfter(stream, "\n\n")
	for i, f := range frames {
		if strings.HasPrefix(f, "id: "+id+"\n") {
			return strings.Join(frames[i+1:], "")
		}
	}
	t.Fatalf("no frame with id %s", id)
	return ""
}

// TestUIStreamOfAnApprovalFlow: the engine's real approval events (one call
// allowed, one denied, one blocked by policy) make a stream the AI SDK
// accepts, with each tool part in the state the user saw.
func TestUIStreamOfAnApprovalFlow(t *testing.T) {
	t.Parallel()
	count := filepath.Join(t.TempDir(), "count")
	agent := profile.Profile{ID: "ops", Model: profile.ModelScripted, Tools: []string{"shell"},
		Policy: policy.Config{Rules: []policy.Rule{deployRule}}, Script: []profile.Turn{
			{Text: "Deploying.", ToolCalls: []profile.ScriptedCall{
				{Name: "shell", Arguments: fmt.Sprintf(`{"command":"echo deploy-a >> %s"}`, count)},
				{Name: "shell", Arguments: fmt.Sprintf(`{"command":"echo deploy-b >> %s"}`, count)},
				{Name: "shell", Arguments: `{"command":"rm -rf /"}`},
			}},
			{Text: "One deployed, one refused."},
		}}
	e, st, _ := agentEnv(t, agent)
	startStreams(t, e, st)
	runID := runUntil(t, st, "ops", "ship", "ui-approval-1", "paused", 10*time.Second)
	items := pendingApprovals(t, st, runID, 2)
	var allowed, denied string
	for _, ev := range eventsOf(t, st, runID, events.ItemStarted) {
		if strings.Contains(dataOf[events.ToolCallData](t, payloadOf[events.ItemStartedPayload](t, ev).Data).Arguments, "deploy-a") {
			allowed = ev.ItemID
		}
	}
	denied = items[0]
	if denied == allowed {
		denied = items[1]
	}
	decide(t, st, runID, allowed, "allow", "item", "ui-approval-allow")
	decide(t, st, runID, denied, "deny", "item", "ui-approval-deny")
	waitStatus(t, st, runID, "completed", 10*time.Second)

	replay := readRunStream(t, st, runID, "")
	for _, want := range []string{`"type":"tool-approval-request"`, `"type":"tool-output-denied"`, `blocked_by_policy`,
		`"type":"tool-output-available"`, `"finishReason":"stop"`, "data: [DONE]"} {
		if !strings.Contains(replay, want) {
			t.Errorf("the stream lacks %s", want)
		}
	}
	res := nodecheck.Check(t, 30*time.Second, http.Header{"Authorization": {"Bearer " + token}},
		nodecheck.Target{URL: "http://" + st.Addr() + "/v1/runs/" + runID + "/stream"})
	states := map[string]int{}
	for _, m := range res[0].Messages {
		for _, p := range m.Parts {
			if p.Type == "dynamic-tool" {
				states[p.State]++
			}
		}
	}
	if states["output-available"] != 1 || states["output-denied"] != 1 || states["output-error"] != 1 {
		t.Errorf("the SDK built tool parts in states %v, want one available, one denied, one error", states)
	}
}
