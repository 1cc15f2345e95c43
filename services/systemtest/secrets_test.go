package systemtest_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/services/engine/profile"
	"github.com/xbot-runtime/xbot/services/stack"
)

// The end-to-end tests of the secrets and trust-boundary fixes: which key
// goes to which model provider, what a provider's error text may reach,
// and path spellings the policy must see through.

// authLog records the Authorization header of each request by URL path.
type authLog struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (a *authLog) record(r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen[r.URL.Path] = append(a.seen[r.URL.Path], r.Header.Get("Authorization"))
}

func (a *authLog) of(path string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[path]
}

// textServer answers every chat completion with a recorded text stream.
func textServer(t *testing.T, auth *authLog) *httptest.Server {
	t.Helper()
	return replayServer(t, func(r *http.Request, _ []byte) { auth.record(r) }, "openai-text.sse")
}

// replayServer is an OpenAI-compatible server that answers the nth chat
// completion with the nth recorded stream of replies (the last one again
// after that), handing each request and its body to seen first.
func replayServer(t *testing.T, seen func(*http.Request, []byte), replies ...string) *httptest.Server {
	t.Helper()
	streams := make([][]byte, len(replies))
	for i, name := range replies {
		raw, err := os.ReadFile("../engine/model/openai/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		streams[i] = raw
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen(r, body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(streams[min(int(n.Add(1))-1, len(streams)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// llmEnv starts a stack with agents on the real model resolver and llm as
// the global provider, logging to core.
func llmEnv(t *testing.T, llm stack.LLM, core zapcore.Core, agents ...profile.Profile) *stack.Stack {
	t.Helper()
	e := newEnv(t).withAgents(agents...)
	comp := localCompute(t, t.TempDir())
	return e.startWith("all", func(o *stack.Options) {
		o.Compute, o.LLM = comp, llm
		if core != nil {
			o.Logger = zap.New(core)
		}
	})
}

func TestProfileWithOwnBaseURLNeverGetsTheGlobalKey(t *testing.T) {
	t.Parallel()
	const globalKey = "sk-global-must-stay-home"
	auth := &authLog{seen: map[string][]string{}}
	global, other := textServer(t, auth), textServer(t, auth)
	keyVar := fmt.Sprintf("XBOTTEST_OWN_KEY_%d", time.Now().UnixNano())
	if err := os.Setenv(keyVar, "sk-own-key"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Unsetenv(keyVar) })
	st := llmEnv(t, stack.LLM{BaseURL: global.URL + "/v1", APIKey: globalKey, Model: "gpt-test"}, nil,
		profile.Profile{ID: "same-origin", BaseURL: global.URL + "/other/v1"},
		profile.Profile{ID: "elsewhere", BaseURL: other.URL + "/v1"},
		profile.Profile{ID: "elsewhere-keyed", BaseURL: other.URL + "/keyed/v1", APIKeyEnv: keyVar},
	)
	for _, agent := range []string{"same-origin", "elsewhere", "elsewhere-keyed"} {
		runUntil(t, st, agent, "hello", "key-"+agent, "completed", 15*time.Second)
	}
	want := map[string]string{
		"/other/v1/chat/completions": "Bearer " + globalKey, // llm_base_url's origin: the global key
		"/v1/chat/completions":       "",                    // another origin, no apiKeyEnv: no key at all
		"/keyed/v1/chat/completions": "Bearer sk-own-key",   // another origin: only its own key
	}
	for path, header := range want {
		got := auth.of(path)
		if len(got) == 0 {
			t.Errorf("%s: no request", path)
		}
		for _, h := range got {
			if h != header {
				t.Errorf("%s: Authorization %q, want %q", path, h, header)
			}
		}
	}
}

func TestProviderErrorTextNeverReachesTheTenant(t *testing.T) {
	t.Parallel()
	const key = "sk-echoed-by-a-careless-proxy-0123456789"
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s (decoded from %s); internal host 10.1.2.3","type":"invalid_request_error","code":"invalid_api_key"}}`, key, b64)
	}))
	t.Cleanup(srv.Close)
	core, logs := observer.New(zap.WarnLevel)
	st := llmEnv(t, stack.LLM{BaseURL: srv.URL + "/v1", APIKey: key, Model: "gpt-test"}, core,
		profile.Profile{ID: "careless"})
	runID := create(t, st, "careless", "hello", "provider-error-1").RunID
	if run := waitStatus(t, st, runID, "failed", 15*time.Second); run.ErrorCode != events.FailModelError {
		t.Errorf("errorCode %q, want model_error", run.ErrorCode)
	}
	raw, err := json.Marshal(listEvents(t, st, runID))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{key, b64, "Incorrect API key", "10.1.2.3", "invalid_api_key"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("the run's events carry %q:\n%s", leak, raw)
		}
	}
	failed := payloads[events.RunFailedPayload](t, st, runID)
	if len(failed) != 1 || failed[0].Message != "model provider returned HTTP 401 (authentication)" {
		t.Errorf("run.failed %+v, want the summary", failed)
	}
	entries := logs.FilterMessage("model call failed").FilterField(zap.String("run_id", runID)).All()
	if len(entries) == 0 {
		t.Fatalf("no operator log line for the run; got %v", logs.All())
	}
	for _, e := range logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		if strings.Contains(line, key) || strings.Contains(line, b64) {
			t.Errorf("the operator log carries the key: %s", line)
		}
	}
	if text := fmt.Sprint(entries[0].ContextMap()["error"]); !strings.Contains(text, "Incorrect API key") {
		t.Errorf("the operator log lost the provider's text: %s", text)
	}
}

func TestPolicyDeniesCredentialPathSpellings(t *testing.T) {
	t.Parallel()
	const secret = "-----BEGIN OPENSSH PRIVATE KEY----- not-really"
	spellings := []string{"/workspace/.ssh//id_rsa", "/workspace/./.ssh/id_rsa", "/workspace/x/../.ssh/id_rsa", ".ssh//id_rsa"}
	turns := []profile.Turn{{ToolCalls: call1("write_file", `{"path":"/workspace/.ssh/id_rsa","content":"`+secret+`"}`)}}
	for _, p := range spellings {
		turns = append(turns, profile.Turn{ToolCalls: call1("read_file", `{"path":"`+p+`"}`)})
	}
	turns = append(turns, profile.Turn{Text: "I could not read it."})
	agent := profile.Profile{ID: "snoop", Model: profile.ModelScripted, Tools: allTools, Script: turns}
	e, st, reqs := agentEnv(t, agent)
	runID := runUntil(t, st, "snoop", "read the key", "spellings-1", "completed", 15*time.Second)
	var denied int
	for _, f := range payloads[events.ItemFailedPayload](t, st, runID) {
		if f.ErrorCode == events.ToolErrBlockedByPolicy && f.RuleID == "default.credentials.read-file" {
			denied++
		}
	}
	if denied != len(spellings) {
		t.Errorf("%d of %d reads denied by default.credentials.read-file", denied, len(spellings))
	}
	for i, r := range reqs.of("snoop")[2:] {
		if res := lastToolResult(r.Messages); strings.Contains(res, secret) || !strings.Contains(res, "blocked_by_policy") {
			t.Errorf("read %s: the model got %q", spellings[i], res)
		}
	}
	e.invariants(st)
}
