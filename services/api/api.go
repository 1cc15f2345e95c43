package api

import (
	"context"
	"net/http"
	"sync/atomic"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
)

// Store reads the read models; the wiring adapts the Postgres ones to it.
//
// GetRun and GetCommand return an error for which
// errors.Is(err, ErrNotFound) holds when the row does not exist for
// that tenant (answered 404). ListRuns may return ErrInvalidCursor
// for a cursor it did not issue (answered 422). WaitCommand returns once the
// command's outcome is in the read model, or ctx's error.
type Store interface {
	GetRun(ctx context.Context, tenantID, runID string) (RunRecord, error)
	ListRuns(ctx context.Context, f RunFilter) ([]RunRecord, string, error)
	ListEvents(ctx context.Context, tenantID, runID string, afterSeq int64, limit, maxBytes int) ([]EventRecord, error)
	GetCommand(ctx context.Context, tenantID, commandID string) (CommandRecord, error)
	WaitCommand(ctx context.Context, tenantID, commandID string) (CommandRecord, error)
	ReadModels
	GrantReader
	SessionStates
}

// CommandSender durably produces a command to xbot.commands.v1, keyed by its
// runId. A nil error means the command will be processed; an error means it
// may or may not have been (the client retries with the same idempotency key).
type CommandSender interface {
	Send(ctx context.Context, c commands.Envelope) error
}

// HealthCheck is one dependency probed by GET /healthz. Check gets a context
// with a 2 s deadline; its error message is shown to unauthenticated callers,
// so it must not contain secrets.
type HealthCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// API is the HTTP API. It is safe for concurrent use.
type API struct {
	cfg    Config
	store  Store
	sender CommandSender
	health []HealthCheck
	log    *zap.Logger
	tokens []tokenEntry
	api    huma.API
	mux    *http.ServeMux
	// streams serves the UI stream endpoints once EnableStreams is called.
	streams streams
	// intake bounds the write requests prepared at once (Limits.MaxWrites).
	intake *intake
	// slots counts open streams against Limits.
	slots *streamSlots
	// jwt verifies JWT bearer tokens; nil when Config.JWT is off.
	jwt *jwtVerifier
	// commandPartitions caches Config.CommandPartitions's answer (0: none yet).
	commandPartitions atomic.Int64
	// flights remembers the commands this instance sent (inflight.go).
	flights *flights
	// elsewhere remembers the commands the commands topic's tail showed,
	// other instances' included, and commandsBarrier is that tail
	// (FollowCommands, sentelsewhere.go).
	elsewhere       *flights
	commandsBarrier atomic.Pointer[TailBarrier]
	// tailReady is set by FollowOutcomes (outcomes.go).
	tailReady atomic.Pointer[<-chan struct{}]
	// agents is set by EnableAgents (agents.go).
	agents atomic.Pointer[AgentCatalog]
	// lags is set by EnableProjectorLag (projectors.go).
	lags atomic.Pointer[LagSource]
}

// New builds the API. It panics on a nil dependency (a wiring bug) and
// returns an error for an invalid configuration.
func New(cfg Config, store Store, sender CommandSender, health []HealthCheck, logger *zap.Logger) (*API, error) {
	if store == nil || sender == nil || logger == nil {
		panic("api.New: store, sender and logger are required")
	}
	for _, h := range health {
		if h.Name == "" || h.Check == nil {
			panic("api.New: every HealthCheck needs a Name and a Check")
		}
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	useProblems()
	tokens, err := hashTokens(cfg.Tokens)
	if err != nil {
		return nil, err
	}
	verifier, err := newJWTVerifier(cfg.JWT)
	if err != nil {
		return nil, err
	}
	a := &API{cfg: cfg, store: store, sender: sender, health: health, log: logger, tokens: tokens, jwt: verifier,
		mux: http.NewServeMux(), flights: newFlights(), elsewhere: newFlights(), slots: &streamSlots{max: cfg.Limits.MaxStreams, maxPer: cfg.Limits.MaxStreamsPerPrincipal},
		intake: newIntake(cfg.Limits.MaxWrites, cfg.Limits.WriteTimeout)}
	a.api = humago.New(a.mux, a.humaConfig())
	a.api.UseMiddleware(a.authenticate, a.resolveAliases)
	a.registerRoutes()
	a.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeProblem(w, newProblem(http.StatusNotFound, events.CodeNotFound, "no such route"))
	})
	return a, nil
}

// Handler returns the http.Handler serving every route, with request logging
// and the request metrics and spans (metrics.go).
// Requests that are not valid UTF-8 text are refused before any route runs.
// With Config.CORS on, cross-origin requests are answered as it says (cors.go).
func (a *API) Handler() http.Handler {
	return keepWriter(observeRequests(a.logRequests(a.cors(a.checkEncoding(noteRoute(a.mux))))))
}

// OpenAPI returns the OpenAPI 3.1 document describing the API.
func (a *API) OpenAPI() *huma.OpenAPI { return a.api.OpenAPI() }

const (
	bearerScheme = "bearer"
	// schemaPrefix is where huma.DefaultConfig's registry puts schemas.
	schemaPrefix = "#/components/schemas/"
)

func (a *API) humaConfig() huma.Config {
	c := huma.DefaultConfig("xbot runtime API", a.cfg.Version)
	c.OnAddOperation = append(c.OnAddOperation, documentAliases, declareErrors)
	useSchemaLinks(&c, a.cfg.PublicURL)
	c.Info.Description = "Commands and queries of the xbot event-sourced agent runtime. " +
		"Every /v1 request needs `Authorization: Bearer <token>`; errors are RFC 9457 problems with a stable `code`. " +
		"Times are Unix milliseconds."
	c.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		bearerScheme: {Type: "http", Scheme: "bearer", Description: "A tenant's API token."},
	}
	c.Tags = []*huma.Tag{
		{Name: "Runs", Description: "Create and steer runs; read their state and event log."},
		{Name: "Commands", Description: "Outcomes of commands."},
		{Name: "Agents", Description: "What each agent offers: tools, options, controls."},
		{Name: "System", Description: "Health."},
	}
	return c
}

var secured = []map[string][]string{{bearerScheme: {}}}

func (a *API) registerRoutes() {
	a.registerCreateRun()
	a.registerCancelRun()
	a.registerAppendUserInput()
	a.registerGetRun()
	a.registerListRuns()
	a.registerListRunEvents()
	a.registerGetCommand()
	a.registerHealth()
	a.registerListRunItems()
	a.registerListApprovals()
	a.registerSubmitApprovalDecision()
	a.registerRequestCompaction()
	a.registerBuiltinPolicy()
	a.registerWhoami()
	a.registerListSessionRuns()
	a.registerSessionState()
	a.registerSessionMessage()
	a.registerSessionInterrupt()
	a.registerStreams()
	a.registerAgents()
	a.registerGetRunSnapshot()
	a.registerGrants()
	a.registerProjectorLag()
}

// register adds an operation whose handler errors all go through problemFor.
// op.Errors lists the statuses its handler answers itself; the document
// declares those and the ones its shape implies (responses.go).
func register[I, O any](a *API, op huma.Operation, h func(context.Context, *I) (*O, error)) {
	if op.Security == nil {
		op.Security = secured
	}
	// The error responses are declared by declareErrors (responses.go);
	// huma would add its own.
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[handlerErrorsKey], op.Errors = op.Errors, nil
	op.MaxBodyBytes = a.cfg.MaxBodyBytes
	op.BodyReadTimeout = a.cfg.Limits.BodyReadTimeout
	write := op.Method != http.MethodGet && op.Method != http.MethodHead
	huma.Register(a.api, op, func(ctx context.Context, in *I) (*O, error) {
		liftReadDeadline(ctx)
		if write {
			var slot *intakeSlot
			var err error
			ctx, slot, err = a.intake.enter(ctx)
			defer slot.end()
			if err != nil {
				return nil, a.problemFor(ctx, err)
			}
		}
		out, err := h(ctx, in)
		if err != nil {
			return nil, a.problemFor(ctx, err)
		}
		return out, nil
	})
}
