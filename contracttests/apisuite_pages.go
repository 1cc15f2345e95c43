package contracttests

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// pagedRuns is how many runs the pagination check creates in its session.
const pagedRuns = 5

// pagination: every list read with pages of one row equals the list read
// with one big page — same rows, same order, none twice — and a run created
// between two pages does not shift the rows after the cursor.
func (s *apiSuite) pagination(ctx context.Context) error {
	r := newRuns(s.main(), "pages")
	defer r.cleanup()
	c, session, ws := r.c, r.name("session"), r.name("ws")
	var ids []string
	for i := range pagedRuns {
		agent := AgentDemo
		if i == 0 {
			agent = AgentApproval
		}
		id, err := r.create(ctx, agent, ws, session, "page")
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if err := s.approveAndFinish(ctx, c, ids); err != nil {
		return err
	}
	errs := []error{
		samePages("runs of the session", ids, func(limit int) iter.Seq2[string, error] {
			return ids2(c.Runs(ctx, client.RunQuery{PlatformSessionID: session, Page: client.Page{Limit: limit}}), func(r client.Run) string { return r.RunID })
		}),
		samePages("GET /v1/sessions/{id}/runs", ids, func(limit int) iter.Seq2[string, error] {
			return ids2(c.SessionRuns(ctx, session, client.RunQuery{Page: client.Page{Limit: limit}}), func(r client.Run) string { return r.RunID })
		}),
		samePages("items", nil, func(limit int) iter.Seq2[string, error] {
			return ids2(c.Items(ctx, ids[0], client.Page{Limit: limit}), func(it client.Item) string { return it.ItemID })
		}),
		samePages("approvals", nil, func(limit int) iter.Seq2[string, error] {
			return ids2(c.Approvals(ctx, client.ApprovalQuery{RunID: ids[0], Page: client.Page{Limit: limit}}), func(a client.Approval) string { return a.ItemID })
		}),
		sameEvents(ctx, c, ids[0]),
		s.newRunBetweenPages(ctx, r, session, ws, ids),
	}
	return errors.Join(errs...)
}

// approveAndFinish allows the first run's approval and waits for every run to complete.
func (s *apiSuite) approveAndFinish(ctx context.Context, c *client.Client, ids []string) error {
	if _, err := await(ctx, c, ids[0], "paused", "awaiting_approval"); err != nil {
		return err
	}
	item, err := pendingItem(ctx, c, ids[0])
	if err != nil {
		return err
	}
	if _, err := c.DecideApproval(ctx, ids[0], client.ApprovalDecisionRequest{ItemID: item, Decision: "allow", Scope: "item"}, client.CommandOptions{}); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := await(ctx, c, id, "completed", ""); err != nil {
			return err
		}
	}
	return nil
}

// ids2 maps an iterator of rows to their ids.
func ids2[T any](rows iter.Seq2[T, error], id func(T) string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for r, err := range rows {
			if !yield(id(r), err) {
				return
			}
		}
	}
}

func collect(rows iter.Seq2[string, error]) ([]string, error) {
	var out []string
	for id, err := range rows {
		if err != nil {
			return out, err
		}
		out = append(out, id)
	}
	return out, nil
}

// samePages compares the list read one row per page with one big page (and
// with want, newest first, when given).
func samePages(what string, want []string, list func(limit int) iter.Seq2[string, error]) error {
	small, err := collect(list(1))
	if err != nil {
		return fmt.Errorf("%s, one per page: %w", what, err)
	}
	big, err := collect(list(100))
	if err != nil {
		return fmt.Errorf("%s, one page: %w", what, err)
	}
	if len(big) == 0 || !slices.Equal(small, big) {
		return fmt.Errorf("%s: one per page %v, one page %v", what, small, big)
	}
	if seen := slices.Compact(slices.Sorted(slices.Values(big))); len(seen) != len(big) {
		return fmt.Errorf("%s: a row repeats: %v", what, big)
	}
	if want != nil && !sameSet(big, want) {
		return fmt.Errorf("%s: %v, want the runs %v", what, big, want)
	}
	return nil
}

// sameSet reports whether a and b hold the same ids, each once.
func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b) && len(slices.Compact(a)) == len(b)
}

// sameEvents compares a run's log read one event per page with the log read
// in default pages: seq 1, 2, 3 … in both.
func sameEvents(ctx context.Context, c *client.Client, runID string) error {
	var small, big []int64
	if err := c.EventPages(ctx, runID, 0, 1, func(p client.EventPage) error {
		for _, ev := range p.Events {
			small = append(small, ev.Seq)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("events one per page: %w", err)
	}
	for ev, err := range c.Events(ctx, runID, 0) {
		if err != nil {
			return fmt.Errorf("events: %w", err)
		}
		big = append(big, ev.Seq)
	}
	for i, seq := range big {
		if seq != int64(i+1) {
			return fmt.Errorf("events of %s: seqs %v are not 1, 2, 3 …", runID, big)
		}
	}
	if !slices.Equal(small, big) || len(big) == 0 {
		return fmt.Errorf("events of %s: one per page %v, default pages %v", runID, small, big)
	}
	return nil
}

// newRunBetweenPages reads the session's runs two per page and creates a run
// after the first page: the rest of the pages still hold each older run
// once, and nothing else.
func (s *apiSuite) newRunBetweenPages(ctx context.Context, r *runs, session, ws string, ids []string) error {
	var got []string
	created := false
	for id, err := range ids2(r.c.Runs(ctx, client.RunQuery{PlatformSessionID: session, Page: client.Page{Limit: 2}}),
		func(r client.Run) string { return r.RunID }) {
		if err != nil {
			return fmt.Errorf("runs while one is created: %w", err)
		}
		got = append(got, id)
		if !created {
			created = true
			if _, err := r.create(ctx, AgentDemo, ws, session, "between pages"); err != nil {
				return err
			}
		}
	}
	if !sameSet(got, ids) {
		return fmt.Errorf("runs read while a run was created after the first page: %v, want each of %v once", got, ids)
	}
	return nil
}
