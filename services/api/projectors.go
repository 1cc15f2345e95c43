package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
)

// ProjectorLag is how far one view is behind the events topic.
type ProjectorLag struct {
	Name string `json:"name" doc:"The view: postgres, clickhouse or im."`
	// Lag counts offsets, so transaction markers count too: a view that has
	// applied everything shows 0 once it committed past the last marker.
	Lag        int64           `json:"lag" doc:"Records of the events topic the view has not applied yet (offsets; transaction markers included)."`
	Partitions map[int32]int64 `json:"partitions" doc:"Lag per partition of the events topic."`
}

// LagSource reports every view's lag. It reads the views' consumer groups
// in Kafka, so it sees projectors running in any process.
type LagSource func(ctx context.Context) ([]ProjectorLag, error)

// projectorLagList is the answer of GET /v1/system/projectors.
type projectorLagList struct {
	Projectors []ProjectorLag `json:"projectors" nullable:"false"`
}

type projectorsOutput struct {
	Body projectorLagList
}

// EnableProjectorLag lets GET /v1/system/projectors answer from src; until
// it is called the route answers 503 unavailable. The route is in the
// document either way, so every instance describes the same API.
func (a *API) EnableProjectorLag(src LagSource) {
	if src == nil {
		panic("api.EnableProjectorLag: src is required")
	}
	a.lags.Store(&src)
}

func (a *API) registerProjectorLag() {
	register(a, huma.Operation{
		OperationID: "getProjectorLag", Method: http.MethodGet, Path: "/v1/system/projectors",
		Summary:     "Projector lag",
		Description: "How far each view (Postgres read models, ClickHouse audit, IM outbox) is behind the event log. Holds no tenant data.",
		Tags:        []string{"System"}, Errors: []int{http.StatusServiceUnavailable},
	}, func(ctx context.Context, _ *struct{}) (*projectorsOutput, error) {
		src := a.lags.Load()
		if src == nil {
			return nil, newProblem(http.StatusServiceUnavailable, events.CodeUnavailable, "projector lag is not served by this instance")
		}
		lags, err := (*src)(ctx)
		if err != nil {
			a.log.Warn("projector lag unavailable", zap.Error(err))
			return nil, newProblem(http.StatusServiceUnavailable, events.CodeUnavailable, "projector lag is unavailable: "+err.Error())
		}
		out := &projectorsOutput{}
		out.Body.Projectors = lags
		if out.Body.Projectors == nil {
			out.Body.Projectors = []ProjectorLag{}
		}
		return out, nil
	})
}
