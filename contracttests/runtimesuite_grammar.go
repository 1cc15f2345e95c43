package contracttests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/xbot-runtime/xbot/services/api/client"
	"github.com/xbot-runtime/xbot/services/api/client/agentruntime"
)

// grammar checks every tour's events against the rules of a reply's parts.
func (s *runtimeSuite) grammar(ctx context.Context) error {
	tours, err := s.fixtures(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tours {
		for _, err := range checkGrammar(t.evs) {
			errs = append(errs, fmt.Errorf("%s: %w", t.name, err))
		}
		if ended := ends(t.evs); t.failed != slices.Contains(ended, agentruntime.OutcomeFailed) {
			errs = append(errs, fmt.Errorf("%s: replies ended %v, want a failed one: %v", t.name, ended, t.failed))
		}
	}
	return errors.Join(errs...)
}

// segment is where a reply's parts stand.
type segment int

const (
	segNone   segment = iota // no part yet
	segOpen                  // after a start
	segPaused                // after a finish with tool-calls
	segEnding                // after the last finish or abort: ResponseEnded is next
	segEnded
)

// grammarState is what checkGrammar knows of one reply.
type grammarState struct {
	seg      segment
	started  *agentruntime.ResponseStarted
	failed   bool // an error part came
	expect   []string
	waitStat bool   // a pause's finish came: StatusChanged waiting is due
	last     string // the type of the reply's last part
}

// checkGrammar checks one conversation's events; it returns every problem.
func checkGrammar(evs []agentruntime.Event) []error {
	g := &grammar{replies: map[string]*grammarState{}, admitted: map[string]bool{}}
	for i, ev := range evs {
		g.i = i
		g.event(ev)
	}
	for id, r := range g.replies {
		if r.seg != segEnded {
			g.errs = append(g.errs, fmt.Errorf("reply %s never ended", id))
		}
	}
	return g.errs
}

type grammar struct {
	i        int
	replies  map[string]*grammarState
	admitted map[string]bool
	errs     []error
}

func (g *grammar) fail(format string, args ...any) {
	g.errs = append(g.errs, fmt.Errorf("event %d: "+format, append([]any{g.i}, args...)...))
}

func (g *grammar) event(ev agentruntime.Event) {
	switch e := ev.(type) {
	case agentruntime.InputAdmitted:
		g.admitted[e.InputID] = true
	case agentruntime.ResponseStarted:
		g.started(e)
	case agentruntime.ResponseOutput:
		g.output(e)
	case agentruntime.InteractionOpened:
		g.opened(e)
	case agentruntime.ResponseEnded:
		g.ended(e)
	case agentruntime.StatusChanged:
		for _, r := range g.replies {
			if r.waitStat && e.Status == agentruntime.StatusWaiting {
				r.waitStat = false
			}
		}
	case agentruntime.InteractionClosed, agentruntime.RuntimeDiagnostic:
	}
}

func (g *grammar) started(e agentruntime.ResponseStarted) {
	if _, ok := g.replies[e.ResponseID]; ok {
		g.fail("reply %s started twice", e.ResponseID)
	}
	for _, id := range e.InputIDs {
		if !g.admitted[id] {
			g.fail("reply %s answers input %s, which was not admitted before", e.ResponseID, id)
		}
	}
	if e.Origin != "input" && e.Origin != "engine" {
		g.fail("reply %s has origin %q", e.ResponseID, e.Origin)
	}
	g.replies[e.ResponseID] = &grammarState{started: &e}
}

func (g *grammar) opened(e agentruntime.InteractionOpened) {
	r := g.replies[e.ResponseID]
	if r == nil || r.seg != segOpen {
		g.fail("interaction %s opened outside an open part of reply %s", e.InteractionID, e.ResponseID)
		return
	}
	if e.Contract.Kind == client.KindToolApproval {
		r.expect = append(r.expect, "tool-approval-request:"+e.InteractionID)
	}
	r.expect = append(r.expect, "data-interaction:"+e.InteractionID, "finish:tool-calls")
}

func (g *grammar) ended(e agentruntime.ResponseEnded) {
	r := g.replies[e.ResponseID]
	switch {
	case r == nil || r.seg != segEnding:
		g.fail("reply %s ended without its last finish or abort right before", e.ResponseID)
		return
	case r.failed != (e.Outcome == agentruntime.OutcomeFailed):
		g.fail("reply %s ended %s after an error part: %v", e.ResponseID, e.Outcome, r.failed)
	case e.Outcome == agentruntime.OutcomeFailed && (e.Error == nil || e.Error.Code == ""):
		g.fail("failed reply %s has no error code", e.ResponseID)
	case len(r.expect) > 0:
		g.fail("reply %s ended while its pause still lacked %v", e.ResponseID, r.expect)
	}
	r.seg = segEnded
}

func (g *grammar) output(e agentruntime.ResponseOutput) {
	if e.ResponseID == "" {
		return // output of no reply: outside every reply's start … finish
	}
	r := g.replies[e.ResponseID]
	var ch client.Chunk
	if err := json.Unmarshal(e.Frame, &ch); err != nil || r == nil {
		g.fail("part %s of an unknown reply %q (%v)", e.Frame, e.ResponseID, err)
		return
	}
	if r.waitStat {
		g.fail("reply %s: a part came after the pause's finish before StatusChanged waiting", e.ResponseID)
		r.waitStat = false
	}
	g.expected(r, ch)
	switch ch.Type {
	case client.ChunkStart:
		g.start(e.ResponseID, r, ch)
	case client.ChunkFinish, client.ChunkAbort:
		g.finish(e.ResponseID, r, ch)
	case client.ChunkError:
		g.inOpen(e.ResponseID, r, ch.Type)
		r.failed = true
	default:
		g.inOpen(e.ResponseID, r, ch.Type)
	}
	r.last = ch.Type
}
