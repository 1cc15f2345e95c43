package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// benchClient talks to the API as a bench client would over the network.
type benchClient struct {
	http  *http.Client
	base  string
	token string
}

func newBenchClient(addr, token string, conns int) *benchClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Each client holds a stream and makes a request at the same time.
	tr.MaxIdleConnsPerHost, tr.MaxConnsPerHost = 2*conns+4, 0
	return &benchClient{http: &http.Client{Transport: tr}, base: "http://" + addr, token: token}
}

func (c *benchClient) do(ctx context.Context, method, path string, body any, hdr ...string) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return c.http.Do(req)
}

// getJSON decodes a 200 answer into out.
func (c *benchClient) getJSON(ctx context.Context, path string, out any) error {
	resp, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// create posts a run and waits for its outcome; it returns the run id.
func (c *benchClient) create(ctx context.Context, key, workspace string) (string, error) {
	body := map[string]any{"agentId": benchAgent, "input": map[string]any{"content": "bench"},
		"sandboxKey": map[string]any{"workspaceId": workspace}}
	resp, err := c.do(ctx, http.MethodPost, "/v1/runs?wait="+acceptWait.String(), body, "Idempotency-Key", key)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var res struct{ RunID, Outcome, Detail string }
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return "", fmt.Errorf("create: HTTP %d: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusAccepted || res.Outcome != string(events.OutcomeAccepted) {
		return "", fmt.Errorf("create: HTTP %d outcome %q %s", resp.StatusCode, res.Outcome, res.Detail)
	}
	return res.RunID, nil
}

// errNoDone says a stream ended without data: [DONE].
var errNoDone = errors.New("stream ended without [DONE]")

// follow reads the run's UI stream, calling first at its first data line,
// until data: [DONE].
func (c *benchClient) follow(ctx context.Context, runID string, first func()) error {
	resp, err := c.do(ctx, http.MethodGet, "/v1/runs/"+runID+"/stream", nil)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stream %s: HTTP %d", runID, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	seen := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data:") {
			continue
		}
		if !seen {
			seen = true
			first()
		}
		if strings.TrimSpace(strings.TrimPrefix(line, "data:")) == "[DONE]" {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errNoDone
}

// waitStatus polls GET /v1/runs/{id} until status is completed.
func (c *benchClient) waitCompleted(ctx context.Context, runID string) error {
	deadline := time.Now().Add(acceptWait)
	for {
		var run struct{ Status string }
		err := c.getJSON(ctx, "/v1/runs/"+runID, &run)
		if err == nil && run.Status == "completed" {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("run %s is %s", runID, run.Status)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}
