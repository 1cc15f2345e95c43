package loadtool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// streamWait bounds the stream measurement: the API's start, one slow run
// and its stream.
const streamWait = 2 * time.Minute

// streamMemory starts a fresh API process, reads its memory idle, then
// while it serves the stream of a live run of the stream agent, and stops
// it.
func (hs *history) streamMemory(ctx context.Context, fig *HistorySize) (err error) {
	ctx, cancel := context.WithTimeout(ctx, streamWait)
	defer cancel()
	api, err := startChild(hs.child, hs.spec(childAPI, ""))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, api.stop()) }()
	at, err := api.await(ctx, "listening")
	if err != nil {
		return err
	}
	idle, err := api.stats(ctx)
	if err != nil {
		return err
	}
	c, err := newClient(at.Addr, hs.token, 2)
	if err != nil {
		return err
	}
	during, live, err := hs.whileStreaming(ctx, c, api)
	if err != nil {
		return err
	}
	fig.APIHeapIdleMB, fig.APIHeapStreamMB = mb(idle.HeapAlloc), mb(during.HeapAlloc)
	fig.APIRSSMB, fig.APIPeakRSSMB, fig.StreamRunLive = mb(during.RSS), mb(during.PeakRSS), live
	return nil
}

// whileStreaming creates a run of the stream agent, follows its stream
// through c and, once the first chunk arrived, reads the API's memory. It
// says whether the run was still live then, and returns once the stream
// ended.
func (hs *history) whileStreaming(ctx context.Context, c *client.Client, api *child) (MemStats, bool, error) {
	_, id, err := hs.startRun(ctx, streamAgent)
	if err != nil {
		return MemStats{}, false, err
	}
	first := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	var streamErr error
	wg.Go(func() {
		streamErr = c.FollowRun(ctx, id, "", func(client.StreamEvent) error {
			once.Do(func() { close(first) })
			return nil
		})
		once.Do(func() { close(first) })
	})
	<-first
	mem, err := api.stats(ctx)
	hs.b.w.mu.Lock()
	_, over := hs.b.w.ended[id]
	hs.b.w.mu.Unlock()
	wg.Wait()
	if streamErr != nil {
		return mem, false, fmt.Errorf("stream of run %s: %w", id, streamErr)
	}
	return mem, !over, err
}

// startRun creates a run of agent and returns once it is accepted, without
// waiting for its end.
func (hs *history) startRun(ctx context.Context, agent string) (time.Time, string, error) {
	hs.seq++
	t0 := time.Now()
	res, err := hs.c.CreateRun(ctx, client.CreateRunRequest{AgentID: agent, Input: client.UserInput{Content: "measure"},
		SandboxKey: &client.SandboxKeyRequest{WorkspaceID: fmt.Sprintf("measure-%d", hs.seq)}},
		client.CommandOptions{IdempotencyKey: fmt.Sprintf("measure-%s-%d", hs.nonce, hs.seq), Wait: client.WaitFor(acceptWait)})
	if err != nil {
		return t0, "", fmt.Errorf("create: %w", err)
	}
	if res.Outcome != client.OutcomeAccepted {
		return t0, "", fmt.Errorf("create: outcome %q %s", res.Outcome, res.Detail)
	}
	return t0, res.RunID, nil
}
