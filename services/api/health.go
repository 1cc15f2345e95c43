package api

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
)

const (
	// checkTimeout bounds each health check: load balancers probe every few
	// seconds and must get an answer before their own timeout.
	checkTimeout = 2 * time.Second
	// maxCheckMessage bounds an error message shown on /healthz.
	maxCheckMessage = 200
)

// healthReport is the 200 answer of /healthz.
type healthReport struct {
	Status string            `json:"status" enum:"ok" doc:"ok when every check passed."`
	Checks map[string]string `json:"checks" doc:"Each check's result: ok, or its error message."`
}

type healthOutput struct {
	Body healthReport
}

func (a *API) registerHealth() {
	register(a, huma.Operation{
		OperationID: "getHealth", Method: http.MethodGet, Path: "/healthz",
		Summary: "Health", Description: "200 when every dependency check passes within 2 s, else 503 naming the failing ones " +
			"(the problem's checks holds each check's result). No authentication.",
		Tags: []string{"System"}, Security: []map[string][]string{}, Errors: []int{http.StatusServiceUnavailable},
	}, func(ctx context.Context, _ *struct{}) (*healthOutput, error) {
		results, failed := a.runChecks(ctx)
		if len(failed) > 0 {
			p := newProblem(http.StatusServiceUnavailable, events.CodeUnavailable, "failing checks: "+strings.Join(failed, ", "))
			p.Checks = results
			return nil, p
		}
		return &healthOutput{Body: healthReport{Status: "ok", Checks: results}}, nil
	})
}

// runChecks runs every check in parallel, each with its own timeout.
func (a *API) runChecks(ctx context.Context) (map[string]string, []string) {
	results := make(map[string]string, len(a.health))
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		failed []string
	)
	for _, h := range a.health {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			res := "ok"
			if err := h.Check(cctx); err != nil {
				res = truncate(err.Error(), maxCheckMessage)
			}
			mu.Lock()
			defer mu.Unlock()
			results[h.Name] = res
			if res != "ok" {
				failed = append(failed, h.Name)
			}
		})
	}
	wg.Wait()
	sort.Strings(failed)
	return results, failed
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
