package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// benchClient talks to the API as a bench client would over the network.
type benchClient struct {
	*client.Client
}

func newBenchClient(addr, token string, conns int) (*benchClient, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Each client holds a stream and makes a request at the same time.
	tr.MaxIdleConnsPerHost, tr.MaxConnsPerHost = 2*conns+4, 0
	c, err := client.New(client.Config{BaseURL: "http://" + addr, Token: token, HTTP: &http.Client{Transport: tr}})
	if err != nil {
		return nil, fmt.Errorf("bench client: %w", err)
	}
	return &benchClient{c}, nil
}

// create posts a run and waits for its outcome; it returns the run id.
func (c *benchClient) create(ctx context.Context, key, workspace string) (string, error) {
	res, err := c.CreateRun(ctx, client.CreateRunRequest{AgentID: benchAgent, Input: client.UserInput{Content: "bench"},
		SandboxKey: &client.SandboxKeyRequest{WorkspaceID: workspace}},
		client.CommandOptions{IdempotencyKey: key, Wait: client.WaitFor(acceptWait)})
	if err != nil {
		return "", fmt.Errorf("create: %w", err)
	}
	if res.Outcome != client.OutcomeAccepted {
		return "", fmt.Errorf("create: outcome %q %s", res.Outcome, res.Detail)
	}
	return res.RunID, nil
}

// errNoDone says a stream ended without data: [DONE].
var errNoDone = errors.New("stream ended without [DONE]")

// follow reads the run's UI stream, calling first at its first data line,
// until data: [DONE].
func (c *benchClient) follow(ctx context.Context, runID string, first func()) error {
	body, err := c.RunStream(ctx, runID, "")
	if err != nil {
		return err
	}
	defer func() { _ = body.Close() }()
	sc := bufio.NewScanner(body)
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

// waitCompleted polls GET /v1/runs/{id} until status is completed.
func (c *benchClient) waitCompleted(ctx context.Context, runID string) error {
	deadline := time.Now().Add(acceptWait)
	for {
		run, err := c.GetRun(ctx, runID)
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
		case <-time.After(20 * time.Millisecond): // poll interval, far below a run's duration
		}
	}
}
