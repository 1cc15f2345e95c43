package contracttests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// badRequest is a request the API must refuse, and the code it refuses it
// with ("" when any registered code will do).
type badRequest struct {
	what, method, path, token, code string
	body                            any
	hdr                             []string
}

func (s *apiSuite) badRequests(session string) []badRequest {
	// Far over any body limit a deployment would set (1 MiB by default).
	big := `{"agentId":"demo","input":{"content":"` + strings.Repeat("x", 8<<20) + `"}}`
	return []badRequest{
		{"no token", "GET", "/v1/runs", "", "unauthorized", nil, nil},
		{"an unknown token", "GET", "/v1/runs", "conformance-not-a-token", "unauthorized", nil, nil},
		{"an unknown route", "GET", "/v1/nowhere", s.Token, "not_found", nil, nil},
		{"an unknown run", "GET", "/v1/runs/run_00000000000000000000000000", s.Token, "run_not_found", nil, nil},
		{"an unknown command", "GET", "/v1/commands/cmd_00000000000000000000000000", s.Token, "command_not_found", nil, nil},
		{"an unknown session", "GET", "/v1/sessions/" + session + "/state", s.Token, "not_found", nil, nil},
		{"an unknown agent", "GET", "/v1/agents/conformance-nobody", s.Token, "not_found", nil, nil},
		{"a bad id", "GET", "/v1/runs/a%20b", s.Token, "", nil, nil},
		{"malformed JSON", "POST", "/v1/runs", s.Token, "", `{"agentId":`, nil},
		{"a missing field", "POST", "/v1/runs", s.Token, "validation_failed", `{"input":{"content":"x"}}`, nil},
		{"invalid UTF-8", "POST", "/v1/runs", s.Token, "invalid_encoding", "{\"agentId\":\"demo\",\"input\":{\"content\":\"\xff\"}}", nil},
		{"a body too large", "POST", "/v1/runs", s.Token, "payload_too_large", big, nil},
		{"a bad wait", "POST", "/v1/runs?wait=soon", s.Token, "validation_failed", `{"agentId":"demo","input":{"content":"x"}}`, nil},
		{"a bad limit", "GET", "/v1/runs?limit=-1", s.Token, "validation_failed", nil, nil},
		{"a bad cursor", "GET", "/v1/runs?cursor=not-a-cursor", s.Token, "", nil, nil},
		{"a message without a key", "POST", "/v1/sessions/" + session + "/messages", s.Token, "validation_failed",
			`{"content":"x","agentId":"demo"}`, nil},
		{"a forged actor", "POST", "/v1/runs", s.Token, "forbidden_scope", `{"agentId":"demo","input":{"content":"x"}}`,
			[]string{"X-Actor-Id", "conformance-someone-else", "Idempotency-Key", session + "-forged"}},
	}
}

// errorCodes: every refused request is an RFC 9457 problem
// (application/problem+json) whose status is the HTTP status, with a code
// of the registry (schemas/v1/errors.json), the expected one where the
// protocol names it; a 4xx, never a 5xx.
func (s *apiSuite) errorCodes(ctx context.Context) error {
	c := s.main()
	var errs []error
	for _, b := range s.badRequests(freshID("conformance-none")) {
		raw := c.WithToken(b.token)
		resp, err := raw.Send(ctx, b.method, b.path, b.body, b.hdr...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", b.what, err))
			continue
		}
		errs = append(errs, checkProblem(b, resp))
	}
	return errors.Join(errs...)
}

func checkProblem(b badRequest, resp *http.Response) error {
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var p client.Problem
	switch {
	case resp.StatusCode < 400 || resp.StatusCode > 499:
		return fmt.Errorf("%s (%s %s): HTTP %d, want a 4xx: %s", b.what, b.method, b.path, resp.StatusCode, clip(body))
	case !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json"):
		return fmt.Errorf("%s: Content-Type %q, want application/problem+json", b.what, resp.Header.Get("Content-Type"))
	case json.Unmarshal(body, &p) != nil || p.Status != resp.StatusCode:
		return fmt.Errorf("%s: HTTP %d with a problem whose status is %d: %s", b.what, resp.StatusCode, p.Status, clip(body))
	}
	if _, ok := client.Lookup(p.Code); !ok {
		return fmt.Errorf("%s: code %q is not in the error registry: %s", b.what, p.Code, clip(body))
	}
	if b.code != "" && p.Code != b.code {
		return fmt.Errorf("%s: code %q, want %q: %s", b.what, p.Code, b.code, clip(body))
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
