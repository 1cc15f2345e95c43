package openai_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbot-runtime/xbot/services/engine/model"
	"github.com/xbot-runtime/xbot/services/engine/model/openai"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// goldenRequest has every kind of message and a tool.
var goldenRequest = model.Request{
	Model: "gpt-4o-2024-08-06",
	Messages: []model.Message{
		{Role: model.RoleSystem, Content: "You are a helpful assistant."},
		{Role: model.RoleUser, Content: "What's the weather like in Edinburgh, and how is AAPL doing?"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs", Arguments: `{"city": "Edinburgh", "country": "GB", "units": "c"}`},
			{ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price", Arguments: ""},
		}},
		{Role: model.RoleTool, ToolCallID: "call_JMW1whyEaYG438VE1OIflxA2", Content: `{"temperature": 12, "units": "c"}`},
		{Role: model.RoleTool, ToolCallID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Content: `{"price": 227.5}`},
		{Role: model.RoleAssistant, Content: "Edinburgh is 12°C; AAPL trades at 227.50.", ToolCalls: []model.ToolCall{
			{ID: "call_3", Name: "get_stock_price", Arguments: `{"ticker": "MSFT"}`},
		}},
	},
	Tools: []model.ToolSpec{
		{Name: "GetWeatherArgs", Description: "Current weather in a city.", Parameters: json.RawMessage(
			`{"type":"object","properties":{"city":{"type":"string"},"country":{"type":"string"},"units":{"type":"string","enum":["c","f"]}},"required":["city","country","units"]}`)},
		{Name: "get_stock_price", Description: "Latest price of a ticker."},
	},
	MaxTokens: 1024,
	Turn:      7, // runtime only: must not be sent
}

func TestRequestBodyGolden(t *testing.T) {
	t.Parallel()
	srv := sseServer(t, fixture(t, "openai-text.sse"))
	p, _ := newProvider(t, srv.URL, nil)
	if _, err := p.Stream(t.Context(), goldenRequest, nil); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	_, body := srv.request(0)
	if err := json.Indent(&got, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	got.WriteByte('\n')
	path := filepath.Join("testdata", "request.golden.json")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want := fixture(t, "request.golden.json"); !bytes.Equal(got.Bytes(), want) {
		t.Errorf("request body differs from %s (run with -update to accept):\n%s", path, got.String())
	}
}

func TestRequestHeadersAndURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, key, base, wantAuth, wantPath, wantQuery string
	}{
		{"with key", "sk-abc", "/v1", "Bearer sk-abc", "/v1/chat/completions", ""},
		{"without key", "", "/v1/", "", "/v1/chat/completions", ""},
		{"azure-style query", "", "/openai/deployments/d?api-version=2024-10-21", "", "/openai/deployments/d/chat/completions", "api-version=2024-10-21"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := sseServer(t, fixture(t, "openai-text.sse"))
			p, err := openai.New(openai.Config{BaseURL: srv.URL + tc.base, APIKey: tc.key, Model: "m",
				ExtraHeaders: map[string]string{"X-Title": "xbot"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := call(t, p); err != nil {
				t.Fatal(err)
			}
			r, _ := srv.request(0)
			_, hasAuth := r.Header["Authorization"]
			if r.Header.Get("Authorization") != tc.wantAuth || hasAuth != (tc.wantAuth != "") {
				t.Errorf("Authorization = %q (present %v), want %q", r.Header.Get("Authorization"), hasAuth, tc.wantAuth)
			}
			if r.URL.Path != tc.wantPath || r.URL.RawQuery != tc.wantQuery || r.Method != http.MethodPost {
				t.Errorf("%s %s?%s", r.Method, r.URL.Path, r.URL.RawQuery)
			}
			if r.Header.Get("X-Title") != "xbot" || r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("headers = %v", r.Header)
			}
		})
	}
}

func TestRequestModel(t *testing.T) {
	t.Parallel()
	srv := sseServer(t, fixture(t, "openai-text.sse"))
	p, _ := newProvider(t, srv.URL, func(c *openai.Config) { c.Model = "" })
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
	if _, err := p.Stream(t.Context(), req, nil); asModelError(t, err).Code != "no_model" {
		t.Errorf("err = %v, want no_model", err)
	}
	req.Model = "qwen3-max"
	if _, err := p.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	if _, body := srv.request(0); !strings.Contains(string(body), `"model":"qwen3-max"`) ||
		strings.Contains(string(body), `"tools"`) || strings.Contains(string(body), `"max_tokens"`) {
		t.Errorf("body %s", body)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cases := map[string]openai.Config{
		"no base URL":      {},
		"not http":         {BaseURL: "ftp://example.com/v1"},
		"no host":          {BaseURL: "http:///v1"},
		"unparsable":       {BaseURL: "http://[::1"},
		"bad header name":  {BaseURL: "http://localhost:8080/v1", ExtraHeaders: map[string]string{"Bad Name": "x"}},
		"relative address": {BaseURL: "localhost:11434/v1"},
	}
	for name, cfg := range cases {
		if _, err := openai.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	if _, err := openai.New(openai.Config{BaseURL: "http://localhost:11434/v1"}); err != nil {
		t.Errorf("Ollama default config rejected: %v", err)
	}
}
