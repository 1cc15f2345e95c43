package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/xbot-runtime/xbot/events"
)

// eventEnvelope is a committed event envelope, sent byte for byte as it was
// on the log.
type eventEnvelope json.RawMessage

// MarshalJSON returns the envelope unchanged.
func (e eventEnvelope) MarshalJSON() ([]byte, error) {
	if len(e) == 0 {
		return []byte("null"), nil
	}
	return e, nil
}

// Schema documents the envelope as the union of the event types of the
// catalog, discriminated by type (eventschemas.go).
func (eventEnvelope) Schema(r huma.Registry) *huma.Schema {
	registerEventSchemas(r)
	return &huma.Schema{Ref: schemaPrefix + eventEnvelopeName}
}

type listRunEventsInput struct {
	RunID    string `path:"runId" maxLength:"160" pattern:"^[A-Za-z0-9._:-]{1,160}$" doc:"The run's id (run_…)."`
	AfterSeq int64  `query:"afterSeq" minimum:"0" default:"0" doc:"Return events with seq greater than this (nextAfterSeq of the previous page)."`
	Limit    int    `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"Page size in events; a page also ends before its envelopes pass the byte cap (1 MiB by default)."`
}

type eventPage struct {
	Events       []eventEnvelope `json:"events" nullable:"false"`
	NextAfterSeq int64           `json:"nextAfterSeq" doc:"Pass as afterSeq to read on: the last returned seq, or afterSeq when the page is empty."`
}

type listRunEventsOutput struct {
	Body eventPage
}

func (a *API) registerListRunEvents() {
	register(a, huma.Operation{
		OperationID: "listRunEvents", Method: http.MethodGet, Path: "/v1/runs/{runId}/events",
		Summary: "List a run's events",
		Description: "The run's committed events in seq order, from the run_events read model. A page holds at most " +
			"`limit` events and at most the API's byte cap of envelopes (1 MiB by default): a page of large events ends " +
			"early, and reading on from `nextAfterSeq` continues with no gap. An event larger than the cap is returned " +
			"alone, so paging always progresses. An empty page means there are no more events yet.",
		Tags: []string{"Runs"}, Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, a.listRunEvents)
}

func (a *API) listRunEvents(ctx context.Context, in *listRunEventsInput) (*listRunEventsOutput, error) {
	noteRun(ctx, in.RunID)
	if _, err := a.findCreatedRun(ctx, in.RunID); err != nil {
		return nil, err
	}
	rows, err := a.store.ListEvents(ctx, tenantOf(ctx), in.RunID, in.AfterSeq, in.Limit, a.cfg.MaxEventPageBytes)
	if err != nil {
		return nil, fmt.Errorf("list events of run %s after %d: %w", in.RunID, in.AfterSeq, err)
	}
	page := eventPage{Events: make([]eventEnvelope, 0, len(rows)), NextAfterSeq: in.AfterSeq}
	for _, r := range rows {
		env, err := envelopeOf(r)
		if err != nil {
			return nil, err
		}
		page.Events = append(page.Events, env)
		page.NextAfterSeq = r.Seq
	}
	return &listRunEventsOutput{Body: page}, nil
}

// envelopeOf returns the row's stored envelope, or rebuilds one from its
// columns when the row has none.
func envelopeOf(r EventRecord) (eventEnvelope, error) {
	if len(r.Envelope) > 0 {
		return eventEnvelope(r.Envelope), nil
	}
	b, err := json.Marshal(events.Envelope{EventID: r.EventID, RunID: r.RunID, Seq: r.Seq,
		SchemaVersion: events.SchemaVersion, Type: events.Type(r.Type), OccurredAt: r.OccurredAt,
		EmittedAt: r.EmittedAt, PlatformSessionID: r.PlatformSessionID, TenantID: r.TenantID,
		ItemID: r.ItemID, CommandID: r.CommandID})
	if err != nil {
		return nil, fmt.Errorf("encode event %s seq %d: %w", r.RunID, r.Seq, err)
	}
	return eventEnvelope(b), nil
}
