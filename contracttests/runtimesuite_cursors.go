package contracttests

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// cursors: from no cursor a new reader gets every event the live reader saw,
// cursors included; from each event's cursor, a reader — every other time a
// new one — gets exactly the events after it.
func (s *runtimeSuite) cursors(ctx context.Context) error {
	tours, err := s.fixtures(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tours {
		errs = append(errs, s.tourCursors(ctx, t))
	}
	return errors.Join(errs...)
}

func (s *runtimeSuite) tourCursors(ctx context.Context, t *tour) error {
	other, err := s.reader(t.rc, t.agent)
	if err != nil {
		return err
	}
	defer func() { _ = other.Close() }()
	if err := sameRest(ctx, other, nil, t.evs); err != nil {
		return fmt.Errorf("%s from the start: %w", t.name, err)
	}
	for i, ev := range t.evs {
		rc := t.rc
		if i%2 == 1 {
			rc = other
		}
		cur := ev.Cursor()
		if err := sameRest(ctx, rc, &cur, t.evs[i+1:]); err != nil {
			return fmt.Errorf("%s after event %d (%s): %w", t.name, i, agentruntime.Name(ev), err)
		}
	}
	return nil
}

// sameRest reads len(want) events after cursor and compares them with want,
// cursors included. A reader that would yield more only does so once the
// conversation goes on, so reading exactly len(want) is enough.
func sameRest(ctx context.Context, rc *agentruntime.Client, cursor *agentruntime.Cursor, want []agentruntime.Event) error {
	if len(want) == 0 {
		return nil
	}
	l := follow(ctx, rc, cursor)
	defer l.stop()
	got, err := l.take(ctx, len(want))
	if err != nil {
		return err
	}
	for i := range want {
		g, _ := agentruntime.Encode(got[i])
		w, _ := agentruntime.Encode(want[i])
		if !bytes.Equal(g, w) {
			return fmt.Errorf("event %d after the cursor:\n got %s\nwant %s", i, g, w)
		}
	}
	return nil
}
