package contracttests

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// TestEveryErrorAnswerOfACheckIsAudited: a check that copes with an error
// answer (here: it only wants the read to fail) still fails when that
// answer is not a problem with a registered code; with a registered code it
// passes, and so does a check that does not apply.
func TestEveryErrorAnswerOfACheckIsAudited(t *testing.T) {
	t.Parallel()
	answers := map[string]struct {
		contentType, body, want string
	}{
		"a registered code":   {"application/problem+json", `{"status":404,"title":"Not Found","code":"run_not_found"}`, "PASS"},
		"an unregistered one": {"application/problem+json", `{"status":404,"title":"Not Found","code":"no_such_run"}`, "FAIL"},
		"no problem at all":   {"text/plain", "not found", "FAIL"},
		"another status":      {"application/problem+json", `{"status":400,"title":"Bad","code":"run_not_found"}`, "FAIL"},
	}
	for name, a := range answers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", a.contentType)
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, a.body)
			}))
			t.Cleanup(srv.Close)
			target := Target{BaseURL: srv.URL, Token: "tok"}
			target.setDefaults()
			c, err := target.api("tok")
			if err != nil {
				t.Fatal(err)
			}
			read := func(ctx context.Context) error {
				var p *client.Problem
				if _, err := c.GetRun(ctx, "run_1"); !errors.As(err, &p) || p.Status != http.StatusNotFound {
					return errors.New("the read did not fail with a 404")
				}
				return nil
			}
			suite := Suite{Name: "audit", Timeout: time.Minute, Checks: []Check{{Name: "read", Run: read},
				{Name: "not applicable", Run: func(ctx context.Context) error { _ = read(ctx); return notApplicable("here") }}}}
			res := suite.Run(context.Background(), io.Discard)
			wantNA := map[string]string{"PASS": "N/A", "FAIL": "FAIL"}[a.want]
			if res[0].Status() != a.want || res[1].Status() != wantNA {
				t.Fatalf("checks %s (%v) and %s (%v), want %s and %s", res[0].Status(), res[0].Err, res[1].Status(), res[1].Err, a.want, wantNA)
			}
			if a.want == "FAIL" && !strings.Contains(res[0].Err.Error(), "GET /v1/runs/run_1") {
				t.Errorf("the failure %v does not name the request", res[0].Err)
			}
		})
	}
}
