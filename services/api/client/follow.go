package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/events"
)

// StreamEvent is one server-sent event of a UI message stream.
type StreamEvent struct {
	// ID is the event's position (its id: line): a reconnect resumes after
	// it with Last-Event-ID. Empty when the event had none.
	ID string
	// Data is the event's data (its data: lines, joined by "\n"): one UI
	// message chunk as JSON.
	Data string
}

// DoneData is the data of the event that ends a UI message stream.
const DoneData = "[DONE]"

// ErrStreamEnded says a stream closed before its data: [DONE]: the server
// cut it off or the connection broke. Opening the stream again after the
// last event's ID reads the rest.
var ErrStreamEnded = errors.New("stream ended without data: " + DoneData)

// maxStreamLine bounds one line of a stream, far above the largest chunk
// the API sends (a tool output preview is capped well below it).
const maxStreamLine = 4 << 20

// FollowRun opens the run's UI message stream (RunStream with query) and
// calls fn with each of its events in order until data: [DONE], which fn
// does not see; comment lines (": keep-alive") are skipped. It returns nil
// after [DONE], fn's error as soon as fn returns one, ErrStreamEnded when the
// stream closes before [DONE], and otherwise the error that opened or read it
// (a *Problem when the API refused the stream).
func (c *Client) FollowRun(ctx context.Context, runID, query string, fn func(StreamEvent) error) error {
	body, err := c.RunStream(ctx, runID, query)
	if err != nil {
		return err
	}
	defer func() { _ = body.Close() }()
	if err := readEvents(body, fn); err != nil {
		return fmt.Errorf("stream of run %s: %w", runID, err)
	}
	return nil
}

// readEvents parses server-sent events from r: an event is its field lines
// up to a blank line; only id and data are used by the API.
func readEvents(r io.Reader, fn func(StreamEvent) error) error {
	sc := bufio.NewScanner(r)
	// The buffer starts at bufio's 4 KiB and doubles for a longer line, up to
	// maxStreamLine: a client following many streams keeps a few KiB for each.
	sc.Buffer(nil, maxStreamLine)
	var ev StreamEvent
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line != "" {
			field, value, _ := strings.Cut(line, ":")
			switch value = strings.TrimPrefix(value, " "); field {
			case "id":
				ev.ID = value
			case "data":
				data = append(data, value)
			}
			continue
		}
		if len(data) > 0 {
			ev.Data = strings.Join(data, "\n")
			if ev.Data == DoneData {
				return nil
			}
			if err := fn(ev); err != nil {
				return err
			}
		}
		ev, data = StreamEvent{}, data[:0]
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return ErrStreamEnded
}

// awaitPoll is how often AwaitRun reads the run: far below the duration of a
// run, and few enough reads not to load the API.
const awaitPoll = 20 * time.Millisecond

// AwaitRun reads the run (GetRun) until until holds for it, and returns that
// run. A read that fails does not end the wait when waiting may cure it (404:
// the read model has not seen the run yet; 429; 5xx; the network), so AwaitRun
// gives up only when ctx ends or the API refuses the read for good (another
// 4xx, returned at once as its *Problem). When ctx ends it returns the run as
// last read and an error wrapping ctx's error that says the run's last status
// or the last read's error.
func (c *Client) AwaitRun(ctx context.Context, runID string, until func(Run) bool) (Run, error) {
	var last Run
	var readErr error
	tick := time.NewTicker(awaitPoll)
	defer tick.Stop()
	for {
		r, err := c.GetRun(ctx, runID)
		switch {
		case err == nil && until(r):
			return r, nil
		case err == nil:
			last, readErr = r, nil
		case refusedForGood(err):
			return last, err
		case ctx.Err() == nil:
			readErr = err
		}
		select {
		case <-ctx.Done():
			return last, awaitError(runID, last, readErr, ctx.Err())
		case <-tick.C:
		}
	}
}

// refusedForGood says err is an answer that no wait changes.
func refusedForGood(err error) bool {
	var p *Problem
	return errors.As(err, &p) && p.Status >= 400 && p.Status < 500 &&
		p.Status != http.StatusNotFound && p.Status != http.StatusTooManyRequests
}

func awaitError(runID string, last Run, readErr, ctxErr error) error {
	switch {
	case readErr != nil:
		return fmt.Errorf("await run %s: %w (last read: %w)", runID, ctxErr, readErr)
	case last.Status == "":
		return fmt.Errorf("await run %s: never read: %w", runID, ctxErr)
	default:
		return fmt.Errorf("await run %s: still %s: %w", runID, last.Status, ctxErr)
	}
}

// RunEnded reports whether the run has ended (completed, failed, cancelled
// or expired), for AwaitRun.
func RunEnded(r Run) bool { return events.Status(r.Status).Terminal() }
