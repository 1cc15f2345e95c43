package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/api"
)

const (
	appOrigin   = "https://app.example"
	otherOrigin = "https://evil.example"
)

// corsRequest sends method path from origin (none when empty) to e; a
// preflight asks for askMethod with the token and key headers. It returns
// the status and the headers of the answer.
func corsRequest(t *testing.T, e *env, method, path, origin, askMethod string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if askMethod != "" {
		req.Header.Set("Access-Control-Request-Method", askMethod)
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,idempotency-key")
	} else {
		req.Header.Set("Authorization", "Bearer "+tokenA)
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode, res.Header
}

// corsHeaders are the headers of an answer whose names start with
// Access-Control-.
func corsHeaders(h http.Header) []string {
	var out []string
	for name := range h {
		if strings.HasPrefix(name, "Access-Control-") {
			out = append(out, name)
		}
	}
	return out
}

func withCORS(c api.CORSConfig) option {
	return withConfig(func(cfg *api.Config) { cfg.CORS = c })
}

func TestCORSIsOffByDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, ask := range []string{"", http.MethodPost} {
		method := http.MethodGet
		if ask != "" {
			method = http.MethodOptions
		}
		if _, h := corsRequest(t, e, method, "/v1/runs", appOrigin, ask); len(corsHeaders(h)) > 0 {
			t.Errorf("%s with CORS off answered %v", method, corsHeaders(h))
		}
	}
}

func TestCORSPreflightOfAnAllowedOriginIsAnsweredWithoutAToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withCORS(api.CORSConfig{AllowedOrigins: []string{"https://APP.example:443", "http://127.0.0.1:5173"}}))
	status, h := corsRequest(t, e, http.MethodOptions, "/v1/sessions/s1/messages", appOrigin, http.MethodPost)
	if status != http.StatusNoContent {
		t.Fatalf("preflight: %d, want 204", status)
	}
	want := map[string]string{
		"Access-Control-Allow-Origin":  appOrigin,
		"Access-Control-Allow-Methods": "GET, POST, DELETE",
		"Access-Control-Allow-Headers": "Authorization, Content-Type, Idempotency-Key, Last-Event-ID",
		"Access-Control-Max-Age":       "600",
	}
	for name, v := range want {
		if got := h.Get(name); got != v {
			t.Errorf("%s = %q, want %q", name, got, v)
		}
	}
	if h.Get("Access-Control-Allow-Credentials") != "" {
		t.Error("credentials are allowed although AllowCredentials is off")
	}
	if vary := strings.Join(h.Values("Vary"), ","); !strings.Contains(vary, "Origin") {
		t.Errorf("Vary %q does not name Origin", vary)
	}
}

func TestCORSRequestOfAnAllowedOriginMayReadTheAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withCORS(api.CORSConfig{AllowedOrigins: []string{appOrigin}}))
	status, h := corsRequest(t, e, http.MethodGet, "/v1/runs", appOrigin, "")
	if status != http.StatusOK || h.Get("Access-Control-Allow-Origin") != appOrigin {
		t.Fatalf("GET: %d, Allow-Origin %q", status, h.Get("Access-Control-Allow-Origin"))
	}
	if h.Get("Access-Control-Expose-Headers") != "Retry-After, Link" {
		t.Errorf("Expose-Headers %q", h.Get("Access-Control-Expose-Headers"))
	}
	// The token is still required: CORS decides who may read, not who may ask.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, e.srv.URL+"/v1/runs", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", appOrigin)
	res, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || res.Header.Get("Access-Control-Allow-Origin") != appOrigin {
		t.Errorf("without a token: %d, Allow-Origin %q; want 401 the page can read", res.StatusCode,
			res.Header.Get("Access-Control-Allow-Origin"))
	}
}

func TestCORSDisallowedOriginGetsNoCORSHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withCORS(api.CORSConfig{AllowedOrigins: []string{appOrigin}}))
	for _, c := range []struct{ method, origin, ask string }{
		{http.MethodOptions, otherOrigin, http.MethodPost},
		{http.MethodGet, otherOrigin, ""},
		{http.MethodGet, "https://app.example.evil.example", ""},
		{http.MethodGet, "http://app.example", ""}, // another scheme is another origin
		{http.MethodGet, "null", ""},
		{http.MethodGet, "", ""},
	} {
		status, h := corsRequest(t, e, c.method, "/v1/runs", c.origin, c.ask)
		if got := corsHeaders(h); len(got) > 0 {
			t.Errorf("%s from %q: CORS headers %v", c.method, c.origin, got)
		}
		if c.method == http.MethodOptions && status == http.StatusNoContent {
			t.Errorf("preflight from %q answered 204", c.origin)
		}
	}
}

func TestCORSCredentialsAndAnyOrigin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withCORS(api.CORSConfig{AllowedOrigins: []string{appOrigin}, AllowCredentials: true, MaxAge: time.Minute}))
	_, h := corsRequest(t, e, http.MethodOptions, "/v1/runs", appOrigin, http.MethodPost)
	if h.Get("Access-Control-Allow-Credentials") != "true" || h.Get("Access-Control-Max-Age") != "60" {
		t.Errorf("credentials %q, max age %q", h.Get("Access-Control-Allow-Credentials"), h.Get("Access-Control-Max-Age"))
	}
	anyE := newEnv(t, withCORS(api.CORSConfig{AllowedOrigins: []string{api.AnyOrigin}}))
	if _, h := corsRequest(t, anyE, http.MethodGet, "/v1/runs", otherOrigin, ""); h.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("any origin: Allow-Origin %q, want *", h.Get("Access-Control-Allow-Origin"))
	}
}

func TestCORSConfigRefusesMalformedOrigins(t *testing.T) {
	t.Parallel()
	for _, c := range []api.CORSConfig{
		{AllowedOrigins: []string{"app.example"}},
		{AllowedOrigins: []string{"ftp://app.example"}},
		{AllowedOrigins: []string{"https://app.example/path"}},
		{AllowedOrigins: []string{"https://user@app.example"}},
		{AllowedOrigins: []string{api.AnyOrigin}, AllowCredentials: true},
		{AllowedOrigins: []string{appOrigin}, MaxAge: -time.Second},
	} {
		cfg := api.Config{Tokens: map[string]string{tokenA: tenantA}, CORS: c}
		if _, err := api.New(cfg, newFakeStore(), &fakeSender{}, nil, zap.NewNop()); err == nil {
			t.Errorf("%+v was accepted", c)
		}
	}
}
