package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
)

type getRunSnapshotInput struct {
	RunID string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
}

// runSnapshot is a run's frozen capability snapshot.
type runSnapshot struct {
	RunID    string          `json:"runId"`
	Seq      int64           `json:"seq" doc:"The seq of the run's runtime.capability.snapshot_frozen event."`
	Hash     string          `json:"hash" doc:"sha256: and the hex digest of the snapshot's bytes."`
	FrozenAt int64           `json:"frozenAt" doc:"Unix milliseconds: when the snapshot was frozen (the event's time)."`
	Snapshot json.RawMessage `json:"snapshot" doc:"The snapshot as the run froze it: profile, tools with their parameter schemas, policy, limits, inherited grants."`
}

type getRunSnapshotOutput struct {
	Body runSnapshot
}

func (a *API) registerGetRunSnapshot() {
	register(a, huma.Operation{
		OperationID: "getRunSnapshot", Method: http.MethodGet, Path: "/v1/runs/{runId}/snapshot",
		Summary: "Get a run's capability snapshot",
		Description: "The capability snapshot the run froze when it started (its runtime.capability.snapshot_frozen " +
			"event): everything the run may use. 404 until the run has started and the read model shows the event.",
		Tags: []string{"Runs"}, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, a.getRunSnapshot)
}

// snapshotPage is how many events a search for the snapshot reads at once:
// it is among a run's first few events (after its acceptance and the
// commands that came while it was queued).
const snapshotPage = 64

func (a *API) getRunSnapshot(ctx context.Context, in *getRunSnapshotInput) (*getRunSnapshotOutput, error) {
	noteRun(ctx, in.RunID)
	run, err := a.findCreatedRun(ctx, in.RunID)
	if err != nil {
		return nil, err
	}
	notFrozen := newProblem(http.StatusNotFound, events.CodeNotFound, "the run's capability snapshot is not frozen yet")
	if run.SnapshotHash == "" {
		return nil, notFrozen
	}
	for after := int64(0); ; {
		rows, err := a.store.ListEvents(ctx, tenantOf(ctx), in.RunID, after, snapshotPage, a.cfg.MaxEventPageBytes)
		if err != nil {
			return nil, fmt.Errorf("list events of run %s after %d: %w", in.RunID, after, err)
		}
		if len(rows) == 0 {
			return nil, notFrozen
		}
		for _, r := range rows {
			if r.Type == string(events.CapabilitySnapshotFrozen) {
				return snapshotOf(r)
			}
			after = r.Seq
		}
	}
}

func snapshotOf(r EventRecord) (*getRunSnapshotOutput, error) {
	var env struct {
		Payload events.SnapshotFrozenPayload `json:"payload"`
	}
	if err := json.Unmarshal(r.Envelope, &env); err != nil {
		return nil, fmt.Errorf("decode the snapshot of run %s: %w", r.RunID, err)
	}
	return &getRunSnapshotOutput{Body: runSnapshot{RunID: r.RunID, Seq: r.Seq, Hash: env.Payload.Hash,
		FrozenAt: r.OccurredAt, Snapshot: env.Payload.Snapshot}}, nil
}
