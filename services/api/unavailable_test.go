package api_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/projections/postgres/postgrestest"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestAReadModelThatCannotBeReachedIs503: reads through a real pgx pool
// whose Postgres refuses connections answer 503 unavailable, the answer a
// client retries, not 500 internal; the problem names neither the database
// nor its user.
func TestAReadModelThatCannotBeReachedIs503(t *testing.T) {
	t.Parallel()
	_, up := postgrestest.New(t)
	port := closedPort(t)
	store := postgrestest.Reconfigured(t, up, func(cfg *pgxpool.Config) {
		cfg.ConnConfig.Port, cfg.ConnConfig.ConnectTimeout = port, 5*time.Second
	})
	cfg := up.Config()
	a, err := api.New(api.Config{Tokens: map[string]string{tokenA: tenantA}}, stack.APIStore(store.Queries),
		&fakeSender{}, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	e := &env{srv: srv}

	for _, path := range []string{"/v1/runs", "/v1/runs/run_01JB0000000000000000000001",
		"/v1/runs/run_01JB0000000000000000000001/events", "/v1/sessions/sess-1/state", "/v1/approvals"} {
		r := e.do(t, http.MethodGet, path, tokenA, nil)
		if r.status != http.StatusServiceUnavailable {
			t.Errorf("GET %s with the read model down: %d, want 503\n%s", path, r.status, r.raw)
			continue
		}
		if p := r.problem(t); p.Code != "unavailable" {
			t.Errorf("GET %s: code %q, want unavailable", path, p.Code)
		}
		for _, secret := range []string{cfg.ConnConfig.User, cfg.ConnConfig.Database} {
			if strings.Contains(string(r.raw), secret) {
				t.Errorf("GET %s: the problem names %q: %s", path, secret, r.raw)
			}
		}
	}
}

// closedPort returns a loopback TCP port nothing listens on.
func closedPort(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return uint16(port) //nolint:gosec // a TCP port fits
}
