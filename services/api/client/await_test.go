package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// pendingAPI answers a command pending and then its GET /v1/commands/cmd_1
// pending polls times before answering outcome.
func pendingAPI(t *testing.T, polls int, outcome string) (*client.Client, *atomic.Int32) {
	t.Helper()
	var reads atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"runId":"run_1","commandId":"cmd_1","outcome":"pending"}`)
			return
		}
		if r.URL.Path != "/v1/commands/cmd_1" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		switch n := reads.Add(1); {
		case n == 1:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound) // not in the read model yet
			_, _ = io.WriteString(w, `{"status":404,"title":"Not Found","code":"command_not_found"}`)
		case int(n) <= polls:
			_, _ = io.WriteString(w, `{"commandId":"cmd_1","runId":"run_1","outcome":"pending"}`)
		default:
			_, _ = io.WriteString(w, outcome)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{BaseURL: srv.URL, PendingTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return c, &reads
}

func TestAPendingOutcomeIsPolledFor(t *testing.T) {
	t.Parallel()
	c, reads := pendingAPI(t, 3, `{"commandId":"cmd_1","runId":"run_1","outcome":"applied","createdRunId":"run_2"}`)
	res, err := c.AppendInput(context.Background(), "run_1", client.AppendInputRequest{Intent: "follow_up", Content: "more"},
		client.CommandOptions{Wait: client.WaitFor(time.Second)})
	if err != nil || res.Outcome != client.OutcomeApplied || res.CreatedRunID != "run_2" {
		t.Fatalf("AppendInput = %+v, %v", res, err)
	}
	if n := reads.Load(); n != 4 {
		t.Errorf("%d reads of the command, want 4 (not found, pending, pending, applied)", n)
	}
}

func TestWaitZeroAnswersPendingAtOnce(t *testing.T) {
	t.Parallel()
	c, reads := pendingAPI(t, 0, `{"commandId":"cmd_1","outcome":"accepted"}`)
	res, err := c.CancelRun(context.Background(), "run_1", "", client.CommandOptions{Wait: client.WaitFor(0)})
	if err != nil || res.Outcome != client.OutcomePending || reads.Load() != 0 {
		t.Fatalf("CancelRun = %+v, %v after %d reads; want pending at once", res, err, reads.Load())
	}
}

// TestARejectedCommandIsATypedError: the outcome learnt by polling is
// rejected invalid_state, an error that matches ErrInvalidState and keeps
// the detail, the registry's status and the answer.
func TestARejectedCommandIsATypedError(t *testing.T) {
	t.Parallel()
	c, _ := pendingAPI(t, 1, `{"commandId":"cmd_1","runId":"run_1","outcome":"rejected","code":"invalid_state","message":"run is completed"}`)
	res, err := c.AppendInput(context.Background(), "run_1", client.AppendInputRequest{Intent: "steer", Content: "x"}, client.CommandOptions{})
	var rej *client.RejectedError
	if !errors.Is(err, client.ErrInvalidState) || !errors.As(err, &rej) {
		t.Fatalf("error %v, want a rejection matching ErrInvalidState", err)
	}
	if rej.Status != 409 || rej.Detail != "run is completed" || rej.Result.CommandID != "cmd_1" || res.Outcome != client.OutcomeRejected {
		t.Errorf("rejection %+v, result %+v", rej, res)
	}
	if errors.Is(err, client.ErrNotFound) {
		t.Error("the rejection matches another code's sentinel")
	}
}

func TestADuplicateOfARejectionIsTheSameError(t *testing.T) {
	t.Parallel()
	c, _ := fakeAPI(t, 202, `{"runId":"run_1","commandId":"cmd_0","outcome":"duplicate","originalOutcome":"rejected","originalCode":"unknown_agent"}`)
	_, err := c.CreateRun(context.Background(), client.CreateRunRequest{AgentID: "ghost"}, client.CommandOptions{IdempotencyKey: "k"})
	if !errors.Is(err, client.ErrUnknownAgent) {
		t.Fatalf("error %v, want ErrUnknownAgent", err)
	}
}

func TestPollingStopsAtThePendingTimeout(t *testing.T) {
	t.Parallel()
	c, _ := pendingAPI(t, 1<<30, "")
	c2, err := client.New(client.Config{BaseURL: c.BaseURL(), PendingTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c2.CancelRun(context.Background(), "run_1", "", client.CommandOptions{})
	if err != nil || res.Outcome != client.OutcomePending {
		t.Fatalf("CancelRun = %+v, %v; want pending, no error", res, err)
	}
}

func TestProblemsMatchTheirSentinel(t *testing.T) {
	t.Parallel()
	c, _ := fakeAPI(t, 403, `{"status":403,"title":"Forbidden","detail":"no","code":"forbidden_scope"}`)
	_, err := c.GetRun(context.Background(), "run_x")
	if !errors.Is(err, client.ErrForbiddenScope) || errors.Is(err, client.ErrNotFound) {
		t.Fatalf("error %v does not match only ErrForbiddenScope", err)
	}
	if e, ok := client.Lookup("forbidden_scope"); !ok || e != client.ErrForbiddenScope || e.Status != 403 {
		t.Fatalf("Lookup = %+v, %v", e, ok)
	}
}
