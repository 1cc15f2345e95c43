package contracttests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/xbot-runtime/xbot/projections/uistream/nodecheck"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// interactions: each tour's interactions open once and close once, with
// the reasons its conversation closed them, and the state keeps the receipts.
func (s *runtimeSuite) interactions(ctx context.Context) error {
	tours, err := s.fixtures(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tours {
		errs = append(errs, tourInteractions(ctx, t))
	}
	return errors.Join(errs...)
}

func tourInteractions(ctx context.Context, t *tour) error {
	open := map[string]int{}
	var ids, reasons []string
	for _, ev := range t.evs {
		switch e := ev.(type) {
		case agentruntime.InteractionOpened:
			if open[e.InteractionID]++; open[e.InteractionID] > 1 {
				return fmt.Errorf("%s: interaction %s opened twice", t.name, e.InteractionID)
			}
			ids = append(ids, e.InteractionID)
		case agentruntime.InteractionClosed:
			if open[e.InteractionID] != 1 {
				return fmt.Errorf("%s: interaction %s closed (%s) while not open", t.name, e.InteractionID, e.Reason)
			}
			open[e.InteractionID]++
			reasons = append(reasons, e.Reason)
		}
	}
	if !slices.Equal(reasons, t.closes) || len(ids) != len(t.closes) {
		return fmt.Errorf("%s: interactions %v closed %v, want %v", t.name, ids, reasons, t.closes)
	}
	return receipts(ctx, t, ids)
}

// receipts: the state lists each closed interaction with its reason.
func receipts(ctx context.Context, t *tour, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	st, err := idleState(ctx, t.rc)
	if err != nil {
		return fmt.Errorf("%s: %w", t.name, err)
	}
	for i, id := range ids {
		closed, ok := findClosedIn(st, id)
		if !ok || closed.Reason != t.closes[i] {
			return fmt.Errorf("%s: the state's closed interactions %+v lack %s %s", t.name, st.ClosedInteractions, id, t.closes[i])
		}
	}
	if len(st.PendingInteractions) != 0 {
		return fmt.Errorf("%s: an idle conversation's state has pending %+v", t.name, st.PendingInteractions)
	}
	return nil
}

func findClosedIn(st agentruntime.State, id string) (agentruntime.Interaction, bool) {
	for _, in := range st.ClosedInteractions {
		if in.InteractionID == id {
			return in, true
		}
	}
	return agentruntime.Interaction{}, false
}

// nodeTimeout bounds the AI SDK's check of the tours' parts.
const nodeTimeout = 2 * time.Minute

// aisdk: every tour's parts, as one UI message stream, pass the Vercel AI
// SDK's own chunk schema and message builder (projections/uistream/nodecheck).
func (s *runtimeSuite) aisdk(ctx context.Context) error {
	tours, err := s.fixtures(ctx)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "xbot-conformance-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	var targets []nodecheck.Target
	for _, t := range tours {
		path := filepath.Join(dir, t.name+".sse")
		if err := os.WriteFile(path, []byte(partsStream(t.evs)), 0o600); err != nil {
			return err
		}
		targets = append(targets, nodecheck.Target{File: path})
	}
	_, err = nodecheck.Run(ctx, nodeTimeout, nil, targets...)
	if errors.Is(err, nodecheck.ErrUnavailable) && os.Getenv("CI") != "true" {
		return notApplicable("%v", err)
	}
	return err
}

// partsStream is the ResponseOutput frames of evs as one SSE stream, ids 1,
// 2, 3 …, ended by [DONE].
func partsStream(evs []agentruntime.Event) string {
	var b strings.Builder
	n := 0
	for _, ev := range evs {
		if o, ok := ev.(agentruntime.ResponseOutput); ok {
			n++
			fmt.Fprintf(&b, "id: %d\ndata: %s\n\n", n, o.Frame)
		}
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}
