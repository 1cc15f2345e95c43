package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/events/eventstest"
	"github.com/xbot-runtime/xbot/projections/uistream"
	"github.com/xbot-runtime/xbot/services/api"
	"github.com/xbot-runtime/xbot/services/api/client"
)

// The stream endpoints are tested end to end in services/stack
// (TestUIStream…); here: their contract without a live hub.

func TestStreamsUnavailableUntilEnabled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := seedRun(e, tenantA, "running")
	e.do(t, "GET", "/v1/runs/"+run.RunID+"/stream", tokenA, nil).wantCode(t, http.StatusServiceUnavailable, "unavailable")
	e.do(t, "GET", "/v1/sessions/s1/stream", tokenA, nil).wantCode(t, http.StatusServiceUnavailable, "unavailable")
	e.do(t, "GET", "/v1/runs/"+run.RunID+"/stream", "", nil).wantCode(t, http.StatusUnauthorized, "unauthorized")
}

func TestStreamsAreInTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, "GET", "/openapi.json", "", nil).want(t, http.StatusOK)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(r.raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, id := range map[string]string{"/v1/runs/{runId}/stream": "streamRun", "/v1/sessions/{platformSessionId}/stream": "streamSession"} {
		op := doc.Paths[path]["get"]
		if op.OperationID != id || op.Responses["200"].Content["text/event-stream"] == nil {
			t.Errorf("%s: operation %q, 200 content %v", path, op.OperationID, op.Responses["200"].Content)
		}
	}
	e.do(t, "GET", "/openapi-3.0.json", "", nil).want(t, http.StatusOK)
}

// failingStreamStore is a read model whose every stream read fails.
type failingStreamStore struct{ err error }

func (s failingStreamStore) StreamRunEvents(context.Context, string, string, int64, int) ([]events.Envelope, error) {
	return nil, s.err
}

func (s failingStreamStore) StreamSessionRuns(context.Context, string, string, time.Time, string, int) ([]api.StreamRun, error) {
	return nil, s.err
}

func (s failingStreamStore) StreamSessionHead(context.Context, string, string) (api.StreamRun, error) {
	return api.StreamRun{}, s.err
}

func (s failingStreamStore) StreamSessionRun(context.Context, string, string, string) (api.StreamRun, error) {
	return api.StreamRun{}, s.err
}

// TestAStreamOfARunThisInstanceCreatedNeedsNoReadModel: with every read of
// the read model failing, a client that creates a run and streams it at
// once gets the whole reply: the instance knows it sent the create, waits
// for the run on its tail rather than looking it up, and the tail's hub holds
// the run from its first event.
func TestAStreamOfARunThisInstanceCreatedNeedsNoReadModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hub, err := uistream.NewHub(uistream.HubConfig{Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	readModelDown := errors.New("read model down")
	if err := e.api.EnableStreams(hub, failingStreamStore{readModelDown}, uistream.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	c := e.apiAs(t, tokenA)
	res, err := c.CreateRun(t.Context(), createBody("hi"), client.CommandOptions{Wait: client.WaitFor(0)})
	if err != nil {
		t.Fatal(err)
	}
	e.store.failRuns(readModelDown)
	evs := eventstest.New(t, events.Identity{RunID: res.RunID, TenantID: tenantA}).
		Accepted(res.CommandID, events.RunAcceptedPayload{AgentID: "coder", Input: events.UserInput{Content: "hi"}}).
		Started("ex-1").Completed("hello").Events()
	recs := make([]*uistream.Record, len(evs))
	for i, ev := range evs {
		recs[i] = &uistream.Record{Key: ev.RunID, Offset: int64(i), Value: eventstest.Raw(ev)}
	}
	// The tail shows the run before or after the stream asks for it: either
	// way the stream needs no read model.
	go hub.Deliver(recs)
	var types []string
	for chunk, err := range c.RunChunks(t.Context(), res.RunID, client.StreamOptions{}) {
		if err != nil {
			t.Fatalf("stream after %v: %v", types, err)
		}
		types = append(types, chunk.Type)
	}
	if !slices.Contains(types, "start") || !slices.Contains(types, "finish") {
		t.Fatalf("chunks %v, want the whole reply from start to finish", types)
	}
}
