package contracttests

import (
	"context"
	"errors"
	"fmt"

	"github.com/xbot-runtime/xbot/services/api/client"
)

// tenants: another tenant's token finds none of the tenant's resources —
// every read and command of them answers 404 with the registered code, as
// for an id that does not exist (never 403, which would say it exists) —
// and its lists hold none of them.
func (s *apiSuite) tenants(ctx context.Context) error {
	if s.OtherToken == "" {
		return notApplicable("no token of another tenant (Target.OtherToken, xbot conformance --other-token)")
	}
	r := newRuns(s.main(), "tenants")
	defer r.cleanup()
	session := r.name("session")
	created, err := r.c.CreateRun(ctx, client.CreateRunRequest{AgentID: AgentApproval, Input: client.UserInput{Content: "private"},
		PlatformSessionID: session, SandboxKey: &client.SandboxKeyRequest{WorkspaceID: r.name("ws")}}, client.CommandOptions{})
	if err != nil {
		return err
	}
	run := created.RunID
	r.track(run)
	if _, err := await(ctx, r.c, run, "paused", "awaiting_approval"); err != nil {
		return err
	}
	item, err := pendingItem(ctx, r.c, run)
	if err != nil {
		return err
	}
	other, err := s.api(s.OtherToken)
	if err != nil {
		return err
	}
	errs := otherReads(ctx, other, run, session)
	errs = append(errs, otherCommands(ctx, other, run, item, session)...)
	errs = append(errs, otherLists(ctx, other, run, session)...)
	_, err = other.GetCommand(ctx, created.CommandID)
	errs = append(errs, want404("GET /v1/commands/{commandId}", err, client.ErrCommandNotFound))
	return errors.Join(errs...)
}

// want404 checks that err is a 404 problem with one of codes.
func want404(what string, err error, codes ...*client.CodeError) error {
	var p *client.Problem
	if errors.As(err, &p) && p.Status == 404 {
		for _, c := range codes {
			if errors.Is(err, c) {
				return nil
			}
		}
	}
	return fmt.Errorf("%s as another tenant: %w, want 404 %v", what, err, codes)
}

func otherReads(ctx context.Context, c *client.Client, run, session string) []error {
	_, e1 := c.GetRun(ctx, run)
	_, e2 := c.ListEvents(ctx, run, 0, 0)
	_, e3 := c.ListItems(ctx, run, client.Page{})
	_, e4 := c.GetRunSnapshot(ctx, run)
	_, e5 := c.ListSessionRuns(ctx, session, client.RunQuery{})
	_, e6 := c.SessionState(ctx, session)
	_, e7 := c.SessionGrants(ctx, session)
	var e8, e9 error
	for _, err := range c.RunChunks(ctx, run, client.StreamOptions{MaxReconnects: 1}) {
		e8 = err
		break
	}
	for _, err := range c.SessionChunks(ctx, session, client.StreamOptions{MaxReconnects: 1}) {
		e9 = err
		break
	}
	return []error{
		want404("GET /v1/runs/{runId}", e1, client.ErrRunNotFound), want404("GET …/events", e2, client.ErrRunNotFound),
		want404("GET …/items", e3, client.ErrRunNotFound), want404("GET …/snapshot", e4, client.ErrRunNotFound),
		want404("GET /v1/sessions/{id}/runs", e5, client.ErrNotFound), want404("GET …/state", e6, client.ErrNotFound),
		want404("GET …/grants", e7, client.ErrNotFound), want404("GET /v1/runs/{runId}/stream", e8, client.ErrRunNotFound),
		want404("GET /v1/sessions/{id}/stream", e9, client.ErrNotFound),
	}
}

func otherCommands(ctx context.Context, c *client.Client, run, item, session string) []error {
	now := client.CommandOptions{Wait: client.WaitFor(0)}
	_, e1 := c.CancelRun(ctx, run, "", now)
	_, e2 := c.AppendInput(ctx, run, client.AppendInputRequest{Intent: client.IntentSteer, Content: "x"}, now)
	_, e3 := c.DecideApproval(ctx, run, client.ApprovalDecisionRequest{ItemID: item, Decision: "allow", Scope: "item"}, now)
	_, e4 := c.CompactRun(ctx, run, "", now)
	_, e5 := c.InterruptSession(ctx, session, client.InterruptRequest{}, now)
	return []error{
		want404("POST …/cancel", e1, client.ErrRunNotFound), want404("POST …/inputs", e2, client.ErrRunNotFound),
		want404("POST …/approval-decisions", e3, client.ErrRunNotFound), want404("POST …/compact", e4, client.ErrRunNotFound),
		want404("POST /v1/sessions/{id}/interrupt", e5, client.ErrNotFound),
	}
}

func otherLists(ctx context.Context, c *client.Client, run, session string) []error {
	var errs []error
	for r, err := range c.Runs(ctx, client.RunQuery{PlatformSessionID: session}) {
		if err != nil || r.RunID == run {
			errs = append(errs, fmt.Errorf("GET /v1/runs?platformSessionId= as another tenant: %+v %w", r, err))
			break
		}
	}
	for ap, err := range c.Approvals(ctx, client.ApprovalQuery{RunID: run}) {
		errs = append(errs, fmt.Errorf("GET /v1/approvals?runId= as another tenant lists %+v %w", ap, err))
		break
	}
	return errs
}
