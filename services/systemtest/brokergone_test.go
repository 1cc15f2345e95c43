package systemtest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/devstack/kafkatest"
	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/stack"
)

// TestACreateWithTheBrokerGoneIs503: once every broker is gone, a create is
// answered 503 unavailable with Retry-After when the API's write timeout
// has passed (the produce of its command never returns on its own), and the
// client is told to retry under the same key, instead of waiting as long as
// its connection lasts.
func TestACreateWithTheBrokerGoneIs503(t *testing.T) {
	t.Parallel()
	cl := kafkatest.NewCluster(t, 4)
	fake := cl.Fake(t, "TestChaosBrokerAllRestarted")
	e := newEnvOn(t, cl.Config())
	st := e.startWith("gone", func(o *stack.Options) { o.APILimits.WriteTimeout = 2 * time.Second })
	create(t, st, "slow", "before", "")
	fake.Close()

	c, err := client.New(client.Config{BaseURL: "http://" + st.Addr(), Token: token, Retry: client.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// A bound far above the write timeout: the answer must come.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := c.Send(ctx, http.MethodPost, "/v1/runs?wait=0",
		client.CreateRunRequest{AgentID: "slow", Input: client.UserInput{Content: "after"}}, "Idempotency-Key", "after")
	if err != nil {
		t.Fatalf("a create with the broker gone: %v", err)
	}
	defer res.Body.Close()
	var p client.Problem
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil || res.StatusCode != http.StatusServiceUnavailable ||
		p.Code != string(events.CodeUnavailable) {
		t.Fatalf("a create with the broker gone: %d %+v (%v), want 503 %s", res.StatusCode, p, err, events.CodeUnavailable)
	}
	if res.Header.Get("Retry-After") == "" {
		t.Error("the 503 has no Retry-After")
	}
}
