package executor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/infra/kafka/partition"
	"github.com/xbot-runtime/xbot/services/engine/profile"
)

// Config configures an Executor.
type Config struct {
	// Kafka is the cluster and topic naming. Required.
	Kafka kafka.Config
	// Group is the executors' consumer group. Default
	// Kafka.Group(kafka.DefaultExecutorGroup).
	Group string
	// ID names this instance in logs and events. Default hostname-pid.
	ID string
	// MaxBatch bounds the messages (command batches and appends) folded into
	// one transaction. Default 256: large enough to amortise a commit over
	// many runs, small enough to keep a transaction well under a megabyte.
	MaxBatch int
	// Linger is how long a batch that holds only appends nobody waits for
	// (AppendOptions.NoWait, Run.Post) waits for more before it commits: an
	// append that waits, a command or a full batch commits it at once.
	// Default 5ms; negative: none.
	Linger time.Duration
	// Hooks inject Kafka faults in tests. Nil in production.
	Hooks *kafka.Hooks
	// CommandKeys verify every command record (the API signs with the same
	// keys) and sign the executor's own follow-up commands. Required: an
	// executor without keys would admit commands anyone with access to the
	// broker produced.
	CommandKeys commands.KeyRing
	// RememberFinished is how long a finished run's checkpoint is kept after
	// it ended: while it is, every command on the run gets the answer it
	// would have got the moment the run ended (a repeated idempotency key
	// its original outcome, a cancel no_effect, a follow-up its next run).
	// After it, the run is forgotten: a command naming it is refused as
	// run_not_found. Default 7 days.
	RememberFinished time.Duration
}

func (c *Config) setDefaults() {
	if c.Group == "" {
		c.Group = c.Kafka.Group(kafka.DefaultExecutorGroup)
	}
	if c.ID == "" {
		host, _ := os.Hostname()
		c.ID = host + "-" + strconv.Itoa(os.Getpid())
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 256
	}
	if c.Linger == 0 {
		c.Linger = 5 * time.Millisecond
	}
	if c.RememberFinished == 0 {
		c.RememberFinished = DefaultRememberFinished
	}
}

// DefaultRememberFinished is how long finished runs are remembered unless
// configured otherwise.
const DefaultRememberFinished = 7 * 24 * time.Hour

// Validate reports every configuration problem.
func (c Config) Validate() error {
	var errs []error
	if err := c.Kafka.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.MaxBatch < 1 {
		errs = append(errs, errors.New("executor: MaxBatch must be >= 1"))
	}
	if c.RememberFinished < time.Minute {
		errs = append(errs, errors.New("executor: RememberFinished must be at least 1m"))
	}
	if c.CommandKeys.Empty() {
		errs = append(errs, errors.New("executor: CommandKeys is required (command_signing_key)"))
	}
	return errors.Join(errs...)
}

// Executor owns partitions and drives their runs. It implements kafka.Handler.
type Executor struct {
	cfg      Config
	engine   Engine
	profiles atomic.Pointer[profile.Catalog]
	log      *zap.Logger
	owner    *kafka.Owner

	mu      sync.Mutex
	workers map[int32]*partitionWorker
}

// New returns an executor. Nil dependencies are wiring bugs and panic.
func New(cfg Config, engine Engine, profiles *profile.Catalog, log *zap.Logger) (*Executor, error) {
	if engine == nil || profiles == nil || log == nil {
		panic("executor.New: engine, profiles and logger are required")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ex := &Executor{cfg: cfg, engine: engine, workers: map[int32]*partitionWorker{},
		log: log.With(zap.String("executor_id", cfg.ID))}
	owner, err := kafka.NewOwner(kafka.OwnerConfig{Kafka: cfg.Kafka, Group: cfg.Group, Logger: ex.log, Hooks: cfg.Hooks}, ex)
	if err != nil {
		return nil, err
	}
	ex.owner = owner
	ex.profiles.Store(profiles)
	return ex, nil
}

// SetProfiles replaces the agent profiles (agents.yaml reloaded). Runs that
// already started keep their capability snapshot; runs that start from now
// on resolve the new profiles.
func (ex *Executor) SetProfiles(c *profile.Catalog) {
	if c == nil {
		panic("executor.SetProfiles: nil catalog")
	}
	ex.profiles.Store(c)
}

// Profiles returns the agent profiles runs start with now.
func (ex *Executor) Profiles() *profile.Catalog { return ex.profiles.Load() }

// Run consumes commands and drives runs until ctx is done.
func (ex *Executor) Run(ctx context.Context) error { return ex.owner.Run(ctx) }

// Kill stops the executor as a crash would (tests).
func (ex *Executor) Kill() { ex.owner.Kill() }

// Partitions returns the partitions this executor owns now.
func (ex *Executor) Partitions() []int32 { return ex.owner.Assigned() }

func (ex *Executor) admitOptions() commands.AdmitOptions {
	return commands.AdmitOptions{KnownAgent: ex.profiles.Load().Has, Implemented: ex.engine.Implements}
}

// Commands implements kafka.Handler.
func (ex *Executor) Commands(p int32, recs []kafka.Record) {
	ex.mu.Lock()
	a := ex.workers[p]
	ex.mu.Unlock()
	if a == nil {
		return // not ours any more; the next owner reads them again
	}
	_ = a.submit(a.ctx, commandRecs(recs))
}

// Revoked implements kafka.Handler.
func (ex *Executor) Revoked(p int32) {
	ex.mu.Lock()
	a := ex.workers[p]
	delete(ex.workers, p)
	ex.mu.Unlock()
	if a != nil {
		a.stop()
	}
}

// snapshot resolves the run's profile, as configured now, into its
// capability snapshot, with the session grants the run inherits.
func (ex *Executor) snapshot(st events.RunState) (profile.Snapshot, error) {
	p, ok := ex.profiles.Load().Get(st.AgentID)
	if !ok {
		return profile.Snapshot{}, fmt.Errorf("agent profile %q is no longer configured", st.AgentID)
	}
	snap, err := ex.engine.Snapshot(p, st.InheritedGrants)
	if err != nil {
		return profile.Snapshot{}, err
	}
	// The API checked the options against the profile; a profile reloaded
	// since, or a command that did not pass the API, is checked here.
	if snap.Options, err = p.EffectiveOptions(st.Options); err != nil {
		return profile.Snapshot{}, fmt.Errorf("run options: %w", err)
	}
	return snap, nil
}

// maxAncestors bounds how far back a follow-up's history reaches.
const maxAncestors = commands.MaxHistoryRuns

// ErrHistoryGone means events a run needs are no longer on the events topic
// (deleted by retention or by an operator).
var ErrHistoryGone = errors.New("the run's events are no longer on the events topic")

// historyReads bounds the concurrent range reads of one follow-up's history.
const historyReads = 8

// readHistory reads the events of the runs refs locate, oldest first,
// without their item deltas. Ranges on one partition that lie close
// together (a session's runs, one after another on its sandbox key's
// partition) are read as one; the reads run concurrently. Each run must be
// of tenantID and its events must begin at seq 1.
func (ex *Executor) readHistory(ctx context.Context, tenantID string, refs []commands.HistoryRef) ([][]events.Envelope, error) {
	found := make([][]events.Envelope, len(refs))
	spans := historySpans(refs)
	errs := make([]error, len(spans))
	sem := make(chan struct{}, historyReads)
	var wg sync.WaitGroup
	for i, sp := range spans {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = ex.readSpan(ctx, refs, sp, found)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i, ref := range refs {
		evs := found[i]
		if len(evs) == 0 || evs[0].Seq != 1 {
			return nil, fmt.Errorf("history of run %s: %w", ref.RunID, ErrHistoryGone)
		}
		st, err := events.FoldAll(events.RunState{}, evs)
		if err != nil {
			return nil, fmt.Errorf("history of run %s: %w", ref.RunID, err)
		}
		if st.TenantID != tenantID {
			return nil, fmt.Errorf("%w: run %s", ErrForeignParent, ref.RunID)
		}
		found[i] = slices.DeleteFunc(evs, func(e events.Envelope) bool { return e.Type == events.ItemDelta })
	}
	return found, nil
}

// spanGap is how far apart two runs' ranges on one partition may be and
// still be read as one: what lies between is read and dropped.
const spanGap = 1024

// span is one range read of a partition, for the refs it covers.
type span struct {
	partition int32
	from, to  int64
	refs      []int // indexes into the refs
}

func historySpans(refs []commands.HistoryRef) []span {
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(refs[a].Partition, refs[b].Partition), cmp.Compare(refs[a].From, refs[b].From))
	})
	var spans []span
	for _, i := range order {
		r := refs[i]
		if n := len(spans); n > 0 && spans[n-1].partition == r.Partition && r.From <= spans[n-1].to+spanGap {
			spans[n-1].to = max(spans[n-1].to, r.To)
			spans[n-1].refs = append(spans[n-1].refs, i)
			continue
		}
		spans = append(spans, span{partition: r.Partition, from: r.From, to: r.To, refs: []int{i}})
	}
	return spans
}

// readSpan reads one span and files each run's records of its own range
// under found[i].
func (ex *Executor) readSpan(ctx context.Context, refs []commands.HistoryRef, sp span, found [][]events.Envelope) error {
	byRun := map[string][]int{}
	for _, i := range sp.refs {
		byRun[refs[i].RunID] = append(byRun[refs[i].RunID], i)
	}
	_, err := kafka.ReadRange(ctx, ex.cfg.Kafka, ex.cfg.Kafka.EventsTopic(), sp.partition, sp.from, sp.to, func(rec kafka.Record) error {
		idx, ok := byRun[rec.Key]
		if !ok {
			return nil
		}
		var env *events.Envelope
		for _, i := range idx {
			if rec.Offset < refs[i].From || rec.Offset >= refs[i].To {
				continue
			}
			if env == nil {
				e, err := events.Decode(rec.Value)
				if err != nil {
					return fmt.Errorf("history of run %s: %w", rec.Key, err)
				}
				env = &e
			}
			found[i] = append(found[i], *env)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("history on partition %d: %w", sp.partition, err)
	}
	return nil
}

// ErrForeignParent means a run's parentRunId names a run of another tenant.
var ErrForeignParent = errors.New("the parent run belongs to another tenant")

// parentHistory locates the parent a create named and the parent's own
// earlier runs from the checkpoints of the parent's partition (from their
// latest base on, and the parent's summary). It returns nil when the
// parent has no checkpoint, or its own session is not known: the caller
// then searches for them.
func (ex *Executor) parentHistory(ctx context.Context, parentRunID string, partitions int) (*commands.SessionHistory, error) {
	p := partition.For(parentRunID, partitions)
	rs, err := ex.restore(ctx, p)
	if err != nil || rs == nil {
		return nil, err
	}
	cp, ok := rs.live[parentRunID]
	if f, done := rs.finished[parentRunID]; !ok && done {
		rec, found, err := kafka.ReadAt(ctx, ex.cfg.Kafka, ex.cfg.Kafka.CheckpointsTopic(), p, f.offset)
		if err != nil {
			return nil, fmt.Errorf("checkpoint of parent run %s: %w", parentRunID, err)
		}
		if !found || rec.Key != parentRunID {
			return nil, nil
		}
		if cp, err = decodeCheckpoint(rec.Value); err != nil {
			return nil, fmt.Errorf("parent run %s: %w", parentRunID, err)
		}
		ok = true
	}
	if !ok || cp.History == nil && cp.State.ParentRunID != "" {
		return nil, nil
	}
	end := cp.To
	if end <= 0 {
		var err error
		if _, end, err = kafka.Bounds(ctx, ex.cfg.Kafka, ex.cfg.Kafka.EventsTopic(), p); err != nil {
			return nil, err
		}
	}
	var runs []commands.HistoryRef
	if cp.History != nil {
		runs = append(runs, cp.History.Runs...)
	}
	runs = append(runs, commands.HistoryRef{RunID: parentRunID, Partition: p, From: max(cp.From, 0), To: end})
	return &commands.SessionHistory{Runs: runs[max(0, len(runs)-commands.MaxHistoryRuns):]}, nil
}

// sessionHistory reads the committed events of runID and its ancestors from
// the events topic, oldest run first, without their item deltas (see
// Run.Events); every ancestor must be of tenantID.
// The runs may live on any partition; each is read from its partition's
// start (a known cost; a session store would make this a lookup).
func (ex *Executor) sessionHistory(ctx context.Context, tenantID, runID string, partitions int) ([][]events.Envelope, error) {
	var chain [][]events.Envelope
	for runID != "" {
		if len(chain) == maxAncestors {
			break
		}
		evs, err := ex.readRun(ctx, runID, partitions)
		if err != nil {
			return nil, fmt.Errorf("history of run %s: %w", runID, err)
		}
		if len(evs) == 0 {
			return nil, fmt.Errorf("history of run %s: no events", runID)
		}
		var st events.RunState
		if st, err = events.FoldAll(st, evs); err != nil {
			return nil, fmt.Errorf("history of run %s: %w", runID, err)
		}
		// A parent named by a command written straight to Kafka is not
		// checked by the API: never hand one tenant's conversation to another.
		if st.TenantID != tenantID {
			return nil, fmt.Errorf("%w: run %s", ErrForeignParent, runID)
		}
		// Folded (seq is gap-free) and checked: drop the deltas, as Run.Events does.
		chain = append(chain, slices.DeleteFunc(evs, func(e events.Envelope) bool { return e.Type == events.ItemDelta }))
		runID = st.ParentRunID
	}
	slices.Reverse(chain)
	return chain, nil
}

func (ex *Executor) readRun(ctx context.Context, runID string, partitions int) ([]events.Envelope, error) {
	p := partition.For(runID, partitions)
	var out []events.Envelope
	_, err := kafka.ReadPartition(ctx, ex.cfg.Kafka, ex.cfg.Kafka.EventsTopic(), p, func(rec kafka.Record) error {
		if rec.Key != runID {
			return nil
		}
		env, err := events.Decode(rec.Value)
		if err != nil {
			return err
		}
		out = append(out, env)
		return nil
	})
	return out, err
}
