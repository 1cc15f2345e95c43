package api

import (
	"context"
	"net/http"
	"reflect"
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

type healthBody struct {
	Status string            `json:"status" enum:"ok" doc:"ok when every check passed."`
	Checks map[string]string `json:"checks" doc:"Each check's result: ok, or its error message."`
}

type healthOutput struct {
	Body healthBody
}

// healthProblem is the 503 answer of /healthz: a problem with each check's result.
type healthProblem struct {
	Problem
	Checks map[string]string `json:"checks" doc:"Each check's result: ok, or its error message."`
}

func (a *API) registerHealth() {
	registry := a.api.OpenAPI().Components.Schemas
	schema := registry.Schema(reflect.TypeFor[healthProblem](), true, "HealthProblem")
	register(a, huma.Operation{
		OperationID: "health", Method: http.MethodGet, Path: "/healthz",
		Summary: "Health", Description: "200 when every dependency check passes within 2 s, else 503 naming the failing ones. No authentication.",
		Tags: []string{"System"}, Security: []map[string][]string{},
		Responses: map[string]*huma.Response{"503": {Description: "A check failed.",
			Content: map[string]*huma.MediaType{"application/problem+json": {Schema: schema}}}},
	}, func(ctx context.Context, _ *struct{}) (*healthOutput, error) {
		results, failed := a.runChecks(ctx)
		if len(failed) > 0 {
			p := &healthProblem{Problem: *newProblem(http.StatusServiceUnavailable, events.CodeUnavailable,
				"failing checks: "+strings.Join(failed, ", ")), Checks: results}
			return nil, p
		}
		return &healthOutput{Body: healthBody{Status: "ok", Checks: results}}, nil
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
