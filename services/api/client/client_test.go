package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// seen is what the fake API saw of one request.
type seen struct {
	method, uri, auth, key, body string
}

func fakeAPI(t *testing.T, status int, answer string) (*client.Client, *seen) {
	t.Helper()
	got := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		*got = seen{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Idempotency-Key"), string(raw)}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{BaseURL: srv.URL + "/", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	return c, got
}

// generated stands for a key the client generated in a seen request.
const generated = "<generated>"

var generatedKey = regexp.MustCompile(`^key-[0-9a-f]{32}$`)

func TestCommandRequests(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		call func(*client.Client) (client.CommandResult, error)
		want seen
	}{
		{"create with key and wait", func(c *client.Client) (client.CommandResult, error) {
			return c.CreateRun(ctx, client.CreateRunRequest{AgentID: "demo", Input: client.UserInput{Content: "hi"}},
				client.CommandOptions{IdempotencyKey: "k1", Wait: client.WaitFor(2 * time.Second)})
		}, seen{"POST", "/v1/runs?wait=2s", "Bearer tok", "k1", `{"agentId":"demo","input":{"content":"hi"}}`}},
		{"cancel without reason, server defaults", func(c *client.Client) (client.CommandResult, error) {
			return c.CancelRun(ctx, "run_1", "", client.CommandOptions{})
		}, seen{"POST", "/v1/runs/run_1/cancel", "Bearer tok", generated, ""}},
		{"cancel with reason, no wait", func(c *client.Client) (client.CommandResult, error) {
			return c.CancelRun(ctx, "run_1", "stop", client.CommandOptions{Wait: client.WaitFor(0)})
		}, seen{"POST", "/v1/runs/run_1/cancel?wait=0s", "Bearer tok", generated, `{"reason":"stop"}`}},
		{"steer", func(c *client.Client) (client.CommandResult, error) {
			return c.AppendInput(ctx, "run_1", client.AppendInputRequest{Intent: "steer", Content: "left"}, client.CommandOptions{IdempotencyKey: "s"})
		}, seen{"POST", "/v1/runs/run_1/inputs", "Bearer tok", "s", `{"intent":"steer","content":"left"}`}},
		{"approval decision", func(c *client.Client) (client.CommandResult, error) {
			return c.DecideApproval(ctx, "run_1", client.ApprovalDecisionRequest{ItemID: "itm_1", Decision: "allow", Scope: "run"},
				client.CommandOptions{IdempotencyKey: "d"})
		}, seen{"POST", "/v1/runs/run_1/approval-decisions", "Bearer tok", "d", `{"itemId":"itm_1","decision":"allow","scope":"run"}`}},
		{"compact with reason", func(c *client.Client) (client.CommandResult, error) {
			return c.CompactRun(ctx, "run_1", "too long", client.CommandOptions{Wait: client.WaitFor(time.Second)})
		}, seen{"POST", "/v1/runs/run_1/compact?wait=1s", "Bearer tok", generated, `{"reason":"too long"}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, got := fakeAPI(t, 202, `{"runId":"run_1","commandId":"cmd_1","outcome":"accepted"}`)
			res, err := tc.call(c)
			if err != nil || res.Outcome != client.OutcomeAccepted || res.RunID != "run_1" {
				t.Fatalf("answer %+v, %v", res, err)
			}
			want := tc.want
			if want.key == generated && generatedKey.MatchString(got.key) && res.IdempotencyKey == got.key {
				want.key = got.key
			}
			if *got != want {
				t.Errorf("sent %+v, want %+v", *got, tc.want)
			}
		})
	}
}

func TestErrorAnswersAreProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, answer string
		status       int
		want         client.Problem
	}{
		{"problem document", `{"status":403,"title":"Forbidden","detail":"no","code":"forbidden_scope"}`, 403,
			client.Problem{Status: 403, Code: "forbidden_scope", Title: "Forbidden", Detail: "no", Method: "GET", Path: "/v1/runs/run_x"}},
		{"not a problem", `<html>bad gateway</html>`, 502,
			client.Problem{Status: 502, Detail: "Bad Gateway", Method: "GET", Path: "/v1/runs/run_x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := fakeAPI(t, tc.status, tc.answer)
			_, err := c.GetRun(context.Background(), "run_x")
			var p *client.Problem
			if !errors.As(err, &p) || *p != tc.want {
				t.Fatalf("error %#v, want %#v", err, tc.want)
			}
		})
	}
}

func TestAllEventsReadsEveryPage(t *testing.T) {
	t.Parallel()
	pages := map[string]client.EventPage{
		"0": {Events: []client.Event{{Seq: 1}, {Seq: 2}}, NextAfterSeq: 2},
		"2": {Events: []client.Event{{Seq: 3}}, NextAfterSeq: 3},
		"3": {Events: []client.Event{}, NextAfterSeq: 3},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(pages[r.URL.Query().Get("afterSeq")])
	}))
	t.Cleanup(srv.Close)
	c, _ := client.New(client.Config{BaseURL: srv.URL})
	evs, err := c.AllEvents(context.Background(), "run_1")
	if err != nil || len(evs) != 3 || evs[2].Seq != 3 {
		t.Fatalf("AllEvents = %+v, %v", evs, err)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"", "127.0.0.1:8080"} {
		if _, err := client.New(client.Config{BaseURL: base}); err == nil {
			t.Errorf("New accepted BaseURL %q", base)
		}
	}
}
