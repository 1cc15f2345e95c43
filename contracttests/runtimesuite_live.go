package contracttests

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// waitEvent bounds one wait for an event of a conversation: the slowest
// is a pause's expiry (2 s) or a reply's end on a loaded machine.
const waitEvent = 60 * time.Second

// live reads a conversation's events in the background.
type live struct {
	ch   chan liveItem
	stop context.CancelFunc
	got  []agentruntime.Event
}

type liveItem struct {
	ev  agentruntime.Event
	err error
}

// follow starts reading rc's events after cursor (nil: from the start).
func follow(ctx context.Context, rc *agentruntime.Client, after *agentruntime.Cursor) *live {
	ctx, cancel := context.WithCancel(ctx)
	l := &live{ch: make(chan liveItem, 1024), stop: cancel}
	go func() {
		defer close(l.ch)
		for ev, err := range rc.Events(ctx, after) {
			select {
			case l.ch <- liveItem{ev, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return l
}

// until reads events until pred holds for one, which it returns.
func (l *live) until(ctx context.Context, what string, pred func(agentruntime.Event) bool) (agentruntime.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, waitEvent)
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s after %d events: %w", what, len(l.got), ctx.Err())
		case it, ok := <-l.ch:
			switch {
			case !ok:
				return nil, fmt.Errorf("waiting for %s: the events ended after %d", what, len(l.got))
			case it.err != nil:
				return nil, fmt.Errorf("waiting for %s: %w", what, it.err)
			}
			l.got = append(l.got, it.ev)
			if pred(it.ev) {
				return it.ev, nil
			}
		}
	}
}

// take reads n events.
func (l *live) take(ctx context.Context, n int) ([]agentruntime.Event, error) {
	for len(l.got) < n {
		if _, err := l.until(ctx, fmt.Sprintf("event %d of %d", len(l.got)+1, n), func(agentruntime.Event) bool { return true }); err != nil {
			return l.got, err
		}
	}
	return l.got, nil
}

// idle waits for the end of a reply and then for the runtime to be idle.
func (l *live) idle(ctx context.Context) error {
	if _, err := l.until(ctx, "ResponseEnded", is[agentruntime.ResponseEnded]); err != nil {
		return err
	}
	_, err := l.until(ctx, "StatusChanged idle", func(ev agentruntime.Event) bool {
		s, ok := ev.(agentruntime.StatusChanged)
		return ok && s.Status == agentruntime.StatusIdle
	})
	return err
}

func is[T agentruntime.Event](ev agentruntime.Event) bool { _, ok := ev.(T); return ok }

// frameType is the chunk type of a ResponseOutput's frame ("" for another event).
func frameType(ev agentruntime.Event) string {
	o, ok := ev.(agentruntime.ResponseOutput)
	if !ok {
		return ""
	}
	var f struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(o.Frame, &f)
	return f.Type
}
