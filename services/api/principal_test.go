package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
)

func TestParsePrincipal(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"acme":                             "acme acme [full]",
		"acme/alice":                       "acme alice [full]",
		"acme/bob/read":                    "acme bob [read]",
		"acme/ops/full+act_as":             "acme ops [full act_as]",
		"acme/bad actor":                   "error",
		"acme/a/root":                      "error",
		"acme/a/":                          "error",
		"a/b/c/d":                          "error",
		"bad tenant":                       "error",
		"acme/" + strings.Repeat("x", 161): "error",
	} {
		p, err := api.ParsePrincipal(in)
		got := "error"
		if err == nil {
			got = p.Tenant + " " + p.Actor + " [" + strings.Join(scopeNames(p.Scopes), " ") + "]"
		}
		if got != want {
			t.Errorf("ParsePrincipal(%q) = %s (%v), want %s", in, got, err, want)
		}
	}
}

func scopeNames(s []api.Scope) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

const jwtSecret = "0123456789abcdef0123456789abcdef-test"

func signed(t *testing.T, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJWTBearerTokens: a JWT signed with the configured key maps to its
// tenant, subject and scopes; expired, wrongly signed, unsigned (alg none),
// foreign-audience and scope-less-for-commands tokens are refused.
func TestJWTBearerTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withConfig(func(c *api.Config) {
		c.JWT = api.JWTConfig{HS256Secret: []byte(jwtSecret), Issuer: "idp", Audience: "xbot"}
	}))
	claims := func(scope string, exp time.Duration) jwt.MapClaims {
		c := jwt.MapClaims{"iss": "idp", "aud": "xbot", "sub": "carol", "tenant": tenantA,
			"exp": time.Now().Add(exp).Unix(), "iat": time.Now().Unix()}
		if scope != "" {
			c["scope"] = scope
		}
		return c
	}
	good := signed(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("full", time.Hour))
	e.do(t, "POST", "/v1/runs", good, createBody("hi")).want(t, http.StatusAccepted)
	if c := e.sender.envelopes()[0]; c.Actor.ID != "carol" || c.TenantID != tenantA {
		t.Fatalf("envelope actor %+v tenant %s", c.Actor, c.TenantID)
	}
	readOnly := signed(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("", time.Hour))
	e.do(t, "GET", "/v1/runs", readOnly, nil).want(t, http.StatusOK)
	e.do(t, "POST", "/v1/runs", readOnly, createBody("hi")).wantCode(t, http.StatusForbidden, "forbidden_scope")
	foreign := claims("full", time.Hour)
	foreign["aud"] = "other"
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims("full", time.Hour)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{
		"expired":       signed(t, jwt.SigningMethodHS256, []byte(jwtSecret), claims("full", -time.Minute)),
		"bad signature": signed(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx"), claims("full", time.Hour)),
		"alg none":      none,
		"HS384":         signed(t, jwt.SigningMethodHS384, []byte(jwtSecret), claims("full", time.Hour)),
		"audience":      signed(t, jwt.SigningMethodHS256, []byte(jwtSecret), foreign),
		"garbage":       "a.b.c",
	} {
		r := e.do(t, "GET", "/v1/runs", tok, nil)
		if r.status != http.StatusUnauthorized || r.problem(t).Code != "unauthorized" {
			t.Errorf("%s: HTTP %d %s, want 401 unauthorized", name, r.status, r.raw)
		}
	}
}

// TestSchemaLinksIgnoreTheHostHeader: the Link header naming an answer's
// schema is built from the configured public URL, or relative, never from
// Host or X-Forwarded-Host; the body has no $schema member.
func TestSchemaLinksIgnoreTheHostHeader(t *testing.T) {
	t.Parallel()
	for publicURL, prefix := range map[string]string{"": "</schemas/", "https://api.example.com/": "<https://api.example.com/schemas/"} {
		a, err := api.New(api.Config{Tokens: map[string]string{tokenA: tenantA}, PublicURL: publicURL},
			newFakeStore(), &fakeSender{}, nil, zap.NewNop())
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(a.Handler())
		t.Cleanup(srv.Close)
		c, err := client.New(client.Config{BaseURL: srv.URL, Token: tokenA, HTTP: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		req, err := c.NewRequest(context.Background(), "GET", "/v1/runs", nil, "X-Forwarded-Host", "evil.example", "Forwarded", "host=evil.example")
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "evil.example"
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]json.RawMessage
		err = decodeJSON(res, &body)
		if link := res.Header.Get("Link"); err != nil || link != prefix+`RunList.json>; rel="describedBy"` {
			t.Errorf("public URL %q: Link %q (%v), want %sRunList.json>", publicURL, link, err, prefix)
		}
		if _, ok := body["$schema"]; ok {
			t.Errorf("public URL %q: the body has $schema", publicURL)
		}
	}
	if _, err := api.New(api.Config{Tokens: map[string]string{tokenA: tenantA}, PublicURL: "evil.example"},
		newFakeStore(), &fakeSender{}, nil, zap.NewNop()); err == nil {
		t.Error("a public URL without scheme was accepted")
	}
}

func decodeJSON(res *http.Response, v any) error {
	defer res.Body.Close()
	return json.NewDecoder(res.Body).Decode(v)
}
