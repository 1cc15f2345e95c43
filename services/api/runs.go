package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
)

type sandboxKey struct {
	TenantID    string `json:"tenantId"`
	WorkspaceID string `json:"workspaceId"`
	AgentID     string `json:"agentId"`
	OwnerID     string `json:"ownerId"`
}

// run is a row of the runs read model as the API shows it.
type run struct {
	RunID             string            `json:"runId"`
	TenantID          string            `json:"tenantId"`
	PlatformSessionID string            `json:"platformSessionId,omitempty"`
	AgentID           string            `json:"agentId"`
	ParentRunID       string            `json:"parentRunId,omitempty"`
	Status            string            `json:"status" enum:"created,queued,running,paused,completed,failed,cancelled,expired"`
	PauseReason       string            `json:"pauseReason,omitempty" doc:"Set while paused: awaiting_approval, awaiting_user_input, awaiting_external_tool_result or awaiting_checkpoint_restore."`
	ErrorCode         string            `json:"errorCode,omitempty" doc:"Set when failed: model_error, budget_exhausted, runtime_lost, sandbox_error or internal."`
	CancelReason      string            `json:"cancelReason,omitempty"`
	Input             userInput         `json:"input"`
	SandboxKey        sandboxKey        `json:"sandboxKey"`
	Metadata          map[string]string `json:"metadata,omitempty"`
	LastSeq           int64             `json:"lastSeq" doc:"Seq of the last event projected into this row."`
	CreatedAt         int64             `json:"createdAt" doc:"Unix milliseconds."`
	UpdatedAt         int64             `json:"updatedAt" doc:"Unix milliseconds."`
	Usage             runUsage          `json:"usage" doc:"Token accounting of the run's model calls so far."`
	QueuePosition     *int64            `json:"queuePosition,omitempty" minimum:"0" doc:"Only for a queued run: its place in its sandbox key's queue, 1 = it starts next, once the run holding the key is done (the place its log last recorded, runtime.run.queued: exact within ten of the front, further back at most about twice the real place, which is recorded again each time it halves; for a run with none, how many runs are ahead of it when it is read, 0 = nothing is ahead, it is about to start). Runs of one sandbox key run one at a time, in the order they joined the queue: accepted, or resumed from a pause while another run held the key. A run paused for a person holds no place and is never ahead: it yields the key."`
	SnapshotHash      string            `json:"snapshotHash,omitempty" doc:"Hash (sha256:<hex>) of the capability snapshot frozen when the run started; the snapshot itself is the payload of the run's runtime.capability.snapshot_frozen event."`
}

// runUsage is Usage as the API shows it.
type runUsage struct {
	ModelCalls       int64 `json:"modelCalls" doc:"Completed model calls of the agent loop (assistant messages)."`
	PromptTokens     int64 `json:"promptTokens" doc:"Prompt tokens of the model calls and of the compactions' summarising calls."`
	CompletionTokens int64 `json:"completionTokens" doc:"Completion tokens, summed likewise."`
	TotalTokens      int64 `json:"totalTokens" doc:"Total tokens, summed likewise, as the providers reported them."`
	Compactions      int64 `json:"compactions" doc:"Context compactions (runtime.context.compacted); their calls' tokens are in the sums above."`
}

func runView(r RunRecord) (run, error) {
	v := run{RunID: r.RunID, TenantID: r.TenantID, PlatformSessionID: r.PlatformSessionID, AgentID: r.AgentID,
		ParentRunID: r.ParentRunID, Status: r.Status, PauseReason: r.PauseReason, ErrorCode: r.ErrorCode,
		CancelReason: r.CancelReason, LastSeq: r.LastSeq,
		CreatedAt: r.CreatedAt.UnixMilli(), UpdatedAt: r.UpdatedAt.UnixMilli(),
		Usage: runUsage(r.Usage), QueuePosition: r.QueuePosition, SnapshotHash: r.SnapshotHash}
	for _, f := range []struct {
		raw  json.RawMessage
		into any
	}{{r.Input, &v.Input}, {r.SandboxKey, &v.SandboxKey}, {r.Metadata, &v.Metadata}} {
		if len(f.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(f.raw, f.into); err != nil {
			return v, fmt.Errorf("decode run %s row: %w", r.RunID, err)
		}
	}
	return v, nil
}

type getRunInput struct {
	RunID string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
}

type getRunOutput struct {
	Body run
}

func (a *API) registerGetRun() {
	register(a, huma.Operation{
		OperationID: "getRun", Method: http.MethodGet, Path: "/v1/runs/{runId}",
		Summary: "Get a run", Description: "The run's current state from the runs read model: its status, its " +
			"token usage so far, its capability snapshot's hash once started and, while queued, its queue position.",
		Tags: []string{"Runs"}, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, func(ctx context.Context, in *getRunInput) (*getRunOutput, error) {
		noteRun(ctx, in.RunID)
		r, err := a.findCreatedRun(ctx, in.RunID)
		if err != nil {
			return nil, err
		}
		v, err := runView(r)
		if err != nil {
			return nil, err
		}
		return &getRunOutput{Body: v}, nil
	})
}

type listRunsInput struct {
	PlatformSessionID string `query:"platformSessionId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"Only runs of this session."`
	Status            string `query:"status" enum:"created,queued,running,paused,completed,failed,cancelled,expired" doc:"Only runs in this state."`
	Cursor            string `query:"cursor" doc:"nextCursor of the previous page."`
	Limit             int    `query:"limit" minimum:"1" maximum:"500" default:"50" doc:"Page size (the read model's bounds)."`
}

type runList struct {
	Runs       []run  `json:"runs" nullable:"false"`
	NextCursor string `json:"nextCursor,omitempty" doc:"Pass as cursor to get the next page; absent on the last page."`
}

type listRunsOutput struct {
	Body runList
}

func (a *API) registerListRuns() {
	register(a, huma.Operation{
		OperationID: "listRuns", Method: http.MethodGet, Path: "/v1/runs",
		Summary: "List runs", Description: "The tenant's runs, newest first, one page at a time; follow nextCursor for the next page.",
		Tags: []string{"Runs"}, Errors: []int{http.StatusServiceUnavailable},
	}, a.listRuns)
}

func (a *API) listRuns(ctx context.Context, in *listRunsInput) (*listRunsOutput, error) {
	if in.Status != "" && !events.Status(in.Status).Valid() {
		return nil, invalid("query.status", "is not a run state", in.Status)
	}
	rows, next, err := a.store.ListRuns(ctx, RunFilter{TenantID: tenantOf(ctx),
		PlatformSessionID: in.PlatformSessionID, Status: in.Status, After: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out := &listRunsOutput{Body: runList{Runs: make([]run, 0, len(rows)), NextCursor: next}}
	for _, r := range rows {
		v, err := runView(r)
		if err != nil {
			return nil, err
		}
		out.Body.Runs = append(out.Body.Runs, v)
	}
	return out, nil
}
