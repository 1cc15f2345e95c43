package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/projections/uistream"
)

// SessionStates reads a session's state from the read models; the wiring
// adapts the Postgres ones to it. GetSessionState returns an error for which
// errors.Is(err, ErrNotFound) holds when the tenant has no run in the
// session (answered 404).
type SessionStates interface {
	GetSessionState(ctx context.Context, tenantID, sessionID string) (SessionStateRecord, error)
}

type getSessionStateInput struct {
	PlatformSessionID string `path:"platformSessionId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The platform session's id."`
}

type getSessionStateOutput struct {
	Body sessionState
}

func (a *API) registerSessionState() {
	register(a, huma.Operation{
		OperationID: "getSessionState", Method: http.MethodGet, Path: "/v1/sessions/{platformSessionId}/state",
		Summary: "Get a session's state",
		Description: "The session's RuntimeState as the read models hold it, all read at one point of its log: its " +
			"status (the data part `data-status` the session stream sent last), the open reply (the first running or " +
			"paused run and its assistant message in progress), the interactions its replies wait on and the latest " +
			"closed ones with how they closed, the ids of its inputs queued (accepted, not applied yet) and admitted " +
			"(applied), and `cursor`, the chunk id of the session stream up to which this state is reflected: " +
			"`GET /v1/sessions/{platformSessionId}/stream` with `Last-Event-ID: <cursor>` continues right after it, " +
			"with nothing missed and nothing repeated. An input id is the Idempotency-Key of the command that sent the " +
			"input (its commandId when it had none). Each list holds at most " + strconv.Itoa(maxStateInteractions) +
			" interactions or " + strconv.Itoa(maxStateInputs) + " inputs (the latest, for closed interactions and " +
			"admitted inputs); `truncated` names the lists that were cut. The state lags the log by the projectors' " +
			"delay (a session whose first run this instance created moments ago is waited for, like a read of that " +
			"run). Only the session's owner, a principal with scope act_as or a read-only one (scope read or demo) " +
			"reads it (403 forbidden_scope); 404 when the tenant has no run in the session.",
		Tags:   []string{"Runs"},
		Errors: []int{http.StatusForbidden, http.StatusNotFound, http.StatusServiceUnavailable},
	}, a.getSessionState)
}

func (a *API) getSessionState(ctx context.Context, in *getSessionStateInput) (*getSessionStateOutput, error) {
	p := principalOf(ctx)
	st, err := a.store.GetSessionState(ctx, p.Tenant, in.PlatformSessionID)
	if errors.Is(err, ErrNotFound) {
		st, err = a.createdSessionState(ctx, in.PlatformSessionID, err)
	}
	if err != nil {
		return nil, wrapNotFound(err, "session")
	}
	if !mayReadSession(p, st.OwnerID) {
		return nil, forbidden("the session belongs to another actor; reading its state needs scope act_as")
	}
	return &getSessionStateOutput{Body: sessionStateView(in.PlatformSessionID, st)}, nil
}

// createdSessionState serves a client that created the session's first run
// through this instance moments ago: it waits, as a read of that run would
// (findCreatedRun), for the read model to hold the run, then reads again.
// Otherwise it returns notFound.
func (a *API) createdSessionState(ctx context.Context, sessionID string, notFound error) (SessionStateRecord, error) {
	runID, ok := a.flights.sessionRun(tenantOf(ctx), sessionID)
	if !ok {
		return SessionStateRecord{}, notFound
	}
	if _, err := a.findCreatedRun(ctx, runID); err != nil {
		return SessionStateRecord{}, notFound
	}
	return a.store.GetSessionState(ctx, tenantOf(ctx), sessionID)
}

// mayReadSession reports whether p may read the state of a session owned by
// owner: its owner, an act_as principal, or a read-only one (scope read or
// demo: an observer of the whole tenant, which sends no commands). A
// session with no owner on record is the tenant's.
func mayReadSession(p Principal, owner string) bool {
	return owner == "" || owner == p.Actor || p.canActAs() || (!p.canCommand() && (p.has(ScopeRead) || p.has(ScopeDemo)))
}

// The bounds of the state's lists, as the read models apply them.
const (
	maxStateInteractions = 100
	maxStateInputs       = 200
)

func sessionStateView(sessionID string, st SessionStateRecord) sessionState {
	status, _ := uistream.StatusOf(st.Head.RunID, events.Status(st.Head.Status), events.PauseReason(st.Head.PauseReason))
	v := sessionState{PlatformSessionID: sessionID, Status: sessionStatus(status),
		Cursor:              uistream.SessionPosition{RunID: st.Head.RunID, Pos: uistream.After(st.Head.LastSeq)}.String(),
		PendingInteractions: interactionViews(st.Pending), ClosedInteractions: interactionViews(st.Closed),
		QueuedInputIDs: nonNil(st.Queued), AdmittedInputIDs: nonNil(st.Admitted), Truncated: []string{}}
	if st.Open != nil {
		v.OpenReply = &openReply{RunID: st.Open.RunID, Status: st.Open.Status, PauseReason: st.Open.PauseReason,
			ItemID: st.OpenItemID}
	}
	for _, c := range []struct {
		cut  bool
		name string
	}{{st.PendingMore, "pendingInteractions"}, {st.ClosedMore, "closedInteractions"},
		{st.QueuedMore, "queuedInputIds"}, {st.AdmittedMore, "admittedInputIds"}} {
		if c.cut {
			v.Truncated = append(v.Truncated, c.name)
		}
	}
	return v
}

func interactionViews(rs []InteractionRecord) []interaction {
	out := make([]interaction, len(rs))
	for i, r := range rs {
		out[i] = interaction{InteractionID: r.ItemID, ItemID: r.ItemID, RunID: r.RunID, Kind: r.Kind, Status: r.Status,
			ToolName: r.ToolName, Question: question(r.Input), ApprovalID: r.ApprovalID, RuleID: r.RuleID,
			Reason: r.Reason, Scope: r.Scope, GrantID: r.GrantID, OpenedAt: r.OpenedAt.UnixMilli(), ClosedAt: unixMilli(r.ClosedAt)}
	}
	return out
}

// question is the question of a clarification_request's arguments; "" when
// they hold none (or were cut and are no longer JSON).
func question(input string) string {
	var q struct {
		Question string `json:"question"`
	}
	_ = json.Unmarshal([]byte(input), &q)
	return q.Question
}

func unixMilli(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	ms := t.UnixMilli()
	return &ms
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
