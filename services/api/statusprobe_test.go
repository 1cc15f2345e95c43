package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
	"github.com/xbot-runtime/xbot/projections/uistream"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestEveryOperationAnswersOnlyWhatItDeclares walks the served document and
// drives every operation into each of its failure modes: no token, a
// read-only token, another tenant's token, another actor's, bad path, query
// and header values, bad bodies (not JSON, missing, too large, another
// content type, an unknown field), a forged X-Actor-Id, both names of a
// renamed parameter, a read model that fails, a producer that fails, streams
// off and on and a principal's streams used up. Every answer must have a
// status its operation declares (checkDeclared), and every error status an
// operation declares must have been answered by some probe, or be listed in
// witnessedElsewhere with the test that answers it: the document declares
// exactly what each operation can answer.
func TestEveryOperationAnswersOnlyWhatItDeclares(t *testing.T) {
	t.Parallel()
	p := newProber(t)
	ops := operationsOf(p.doc)
	for _, op := range ops {
		p.generic(op)
	}
	p.failing(ops)
	p.sessionGone()
	p.streaming(ops)
	p.coverage()
}

// witnessedElsewhere are the declared error statuses this test does not
// reach, each with the test that does.
var witnessedElsewhere = map[string]string{
	"POST /v1/runs 409": "TestRetryOfARunEndedLongAgoWithoutItsCreateIs409 (a retry whose run ended long ago and whose create the read models lost)",
}

// panicOnly500 are the operations that answer 500 only through the panic
// guard, which TestAPanickingHandlerIsAnswered500 shows (or to a client that
// went away mid-request): the first six read nothing that can fail, and an
// interrupt answers every failure of what it reads 503.
var panicOnly500 = []string{"GET /v1/whoami", "GET /v1/system/policy/builtins", "GET /v1/agents",
	"GET /v1/agents/{agentId}", "GET /healthz", "GET /v1/system/projectors",
	"POST /v1/sessions/{platformSessionId}/interrupt"}

const (
	readerToken = "secret-token-reader"
	probeRun    = "run_probe"
)

// prober is an API over the fake store with its seen statuses.
type prober struct {
	t    *testing.T
	e    *env
	doc  map[string]any
	mu   sync.Mutex
	seen map[string]map[int]bool
	n    int // requests sent
	ids  map[string]string
}

func newProber(t *testing.T) *prober {
	p := &prober{t: t, seen: map[string]map[int]bool{}}
	store := newFakeStore()
	sender := &fakeSender{store: store, executor: true, firsts: map[string]string{}}
	cfg := api.Config{Tokens: map[string]string{tokenA: tenantA, tokenB: tenantB, tokenAlice: tenantA + "/alice",
		readerToken: tenantA + "/reader/read"}, WaitDefault: time.Second, StreamAppearWait: 10 * time.Millisecond,
		MaxBodyBytes: 64 << 10, Limits: api.Limits{MaxStreamsPerPrincipal: 1}}
	down := api.HealthCheck{Name: "kafka", Check: func(context.Context) error { return errKafkaDown }}
	a, err := api.New(cfg, store, sender, []api.HealthCheck{down}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(checkDeclared(t, a, a.Handler(), p.saw))
	t.Cleanup(srv.Close)
	p.e = &env{api: a, srv: srv, store: store, sender: sender}
	p.doc = documentOf(t, a)
	run := seedRun(p.e, tenantA, "running")
	sessionWithRun(p.e, "sess-1", time.Minute)
	store.mu.Lock()
	store.owners = map[string]string{tenantA + "/sess-1": tenantA}
	grant := events.NewID("grt")
	store.grant = &api.GrantRecord{GrantID: grant, Scope: "platform_session", ToolName: "shell", RunID: run.RunID,
		Actor: events.Actor{Type: "user", ID: tenantA}, GrantedAt: time.Now()}
	store.mu.Unlock()
	store.put(api.CommandRecord{CommandID: "cmd_probe", RunID: run.RunID, TenantID: tenantA, Type: "CancelRun",
		Outcome: "accepted", FirstOutcome: "accepted", UpdatedAt: time.Now()})
	p.ids = map[string]string{"runId": run.RunID, "commandId": "cmd_probe", "platformSessionId": "sess-1",
		"grantId": grant, "agentId": "coder"}
	return p
}

func (p *prober) saw(route string, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen[route] == nil {
		p.seen[route] = map[int]bool{}
	}
	p.seen[route][status] = true
}

// failing sends every operation's own request with the producer failing,
// then with every read of the read models failing.
func (p *prober) failing(ops []probeOp) {
	p.e.sender.fail(errKafkaDown)
	for _, op := range ops {
		p.send(p.own(op))
	}
	p.e.sender.fail(nil)
	// A read model that is down (503), then one that fails otherwise (500).
	for _, fault := range []error{errPostgresDown, errors.New("postgres: relation \"runs\" does not exist")} {
		p.e.store.failReads(fault)
		for _, op := range ops {
			p.send(p.own(op))
		}
		// A create naming a parent run, which cannot be read.
		p.send(probeReq{method: "POST", path: "/v1/runs", rawQuery: "wait=0", token: tokenA,
			body: []byte(`{"agentId":"coder","input":{"content":"x"},"parentRunId":"` + p.ids["runId"] + `"}`)})
	}
	p.e.store.failReads(nil)
}

// sessionGone sends messages to sessions whose latest run ended long ago:
// the message resumes the run, which is gone from the runs read model (404)
// or cannot be read (500).
func (p *prober) sessionGone() {
	e := p.e
	sessionWithRun(e, "sess-old", 30*24*time.Hour)
	sessionWithRun(e, "sess-gone", 30*24*time.Hour)
	e.store.mu.Lock()
	s := e.store.sessions[tenantA+"/sess-gone"]
	s.LastRunID = "run_gone"
	e.store.sessions[tenantA+"/sess-gone"] = s
	e.store.mu.Unlock()
	message := func(session string) int {
		return p.send(probeReq{method: "POST", path: "/v1/sessions/" + session + "/messages", rawQuery: "wait=0",
			token: tokenA, header: http.Header{"Idempotency-Key": {"probe-" + session}}, body: []byte(`{"content":"again"}`)})
	}
	if got := message("sess-gone"); got != http.StatusNotFound {
		p.t.Errorf("a message resuming a run the read model lost: %d, want 404", got)
	}
	e.store.failRuns(errors.New("postgres: connection refused"))
	defer e.store.failRuns(nil)
	if got := message("sess-old"); got != http.StatusInternalServerError {
		p.t.Errorf("a message resuming a run that cannot be read: %d, want 500", got)
	}
}

// streaming turns the streams on (their read model a real Postgres), probes
// the stream operations again, and holds a stream open while opening
// another: the principal's one slot is taken (429).
func (p *prober) streaming(ops []probeOp) {
	store, _ := postgrestest.New(p.t)
	hub, err := uistream.NewHub(uistream.HubConfig{Logger: zap.NewNop()})
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(hub.Close)
	streams := &probeStreams{StreamStore: stack.APIStore(store.Queries), head: api.StreamRun{RunID: p.ids["runId"],
		CreatedAt: time.Now(), Status: "running"}}
	if err := p.e.api.EnableStreams(hub, streams, uistream.StreamConfig{}); err != nil {
		p.t.Fatal(err)
	}
	var streamOps []probeOp
	for _, op := range ops {
		if strings.HasSuffix(op.path, "/stream") {
			streamOps = append(streamOps, op)
			p.generic(op)
		}
	}
	p.e.store.failReads(errors.New("postgres: connection refused"))
	streams.fail.Store(true)
	for _, op := range streamOps {
		p.send(p.own(op))
	}
	p.e.store.failReads(nil)
	streams.fail.Store(false)
	held := p.open(probeReq{method: "GET", path: "/v1/runs/" + p.ids["runId"] + "/stream", token: tokenA})
	defer held()
	for _, op := range streamOps {
		if got := p.send(p.own(op)); got != http.StatusTooManyRequests {
			p.t.Errorf("%s %s while the principal's one stream slot is taken: %d, want 429", op.method, op.path, got)
		}
	}
}

// probeStreams is the streams' read model of the prober: Postgres, whose
// session sess-1 has a head run, or failing reads.
type probeStreams struct {
	api.StreamStore
	head api.StreamRun
	fail atomic.Bool
}

func (s *probeStreams) StreamSessionHead(ctx context.Context, tenantID, sessionID string) (api.StreamRun, error) {
	switch {
	case s.fail.Load():
		return api.StreamRun{}, errors.New("postgres: connection refused")
	case tenantID == tenantA && sessionID == "sess-1":
		return s.head, nil
	}
	return s.StreamStore.StreamSessionHead(ctx, tenantID, sessionID)
}

// coverage fails for a declared error status no probe answered that is
// not witnessed elsewhere.
func (p *prober) coverage() {
	p.t.Logf("%d requests", p.n)
	declared := declaredStatuses(p.doc)
	routes := make([]string, 0, len(declared))
	for r := range declared {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	// A handler may still be finishing an answer its client stopped
	// waiting for (a stream): read what was seen under the lock.
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, route := range routes {
		for status := range declared[route] {
			key := fmt.Sprintf("%s %d", route, status)
			switch {
			case status < 400 || p.seen[route][status]:
			case witnessedElsewhere[key] != "":
			case status == http.StatusInternalServerError && slices.Contains(panicOnly500, route):
			default:
				p.t.Errorf("%s declares %d, which no probe answered: drop it, or add the probe that answers it", route, status)
			}
		}
	}
}
