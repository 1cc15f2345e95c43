package stack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/xbot-runtime/xbot/events"
	chinfra "github.com/xbot-runtime/xbot/infra/clickhouse"
	"github.com/xbot-runtime/xbot/infra/kafka"
	chview "github.com/xbot-runtime/xbot/projections/clickhouse"
	"github.com/xbot-runtime/xbot/projections/im"
	"github.com/xbot-runtime/xbot/projections/runner"
	"github.com/xbot-runtime/xbot/services/api"
)

// startProjectors starts the selected views' runners. Each is an
// independent consumer group on the events topic.
func (s *Stack) startProjectors(ctx, rctx context.Context) error {
	s.Projectors = map[string]*runner.Runner{}
	if s.opts.has(ProjectorPostgres) {
		instance := s.opts.ExecutorID
		if instance == "" {
			instance = "projector"
		}
		err := s.startRunner(ctx, rctx, s.Store, func(ctx context.Context) error {
			return s.Store.Heartbeat(ctx, projectorName, instance)
		}, 0)
		if err != nil {
			return err
		}
	}
	if s.opts.has(ProjectorClickHouse) && s.opts.ClickHouse != nil {
		p, err := s.openClickHouse(ctx)
		if err != nil {
			return err
		}
		if err := s.startRunner(ctx, rctx, p, nil, s.clickHouseLinger()); err != nil {
			return err
		}
	} else if explicitly(s.opts, ProjectorClickHouse) {
		return errors.New("the ClickHouse projector needs clickhouse_addr")
	}
	if s.opts.has(ProjectorIM) {
		p, err := s.openIM()
		if err != nil {
			return err
		}
		if err := s.startRunner(ctx, rctx, p, nil, 0); err != nil {
			return err
		}
	}
	return nil
}

func explicitly(o Options, c Component) bool {
	for _, x := range o.Components {
		if x == c {
			return true
		}
	}
	return false
}

// DefaultClickHouseLinger is how long the audit projector gathers events
// for one insert by default. ClickHouse spends about as much CPU on a small
// insert as on a large one (it writes a part per insert and merges the parts
// later): under xbot bench's load, inserting each fetch as it came cost
// ClickHouse 7.8 ms of CPU per run, gathering for half a second 2.4 ms
// (docs/performance.md). Auditors read the view; half a second more lag is
// not seen.
const DefaultClickHouseLinger = 500 * time.Millisecond

// clickHouseLinger is the audit projector's linger of the options.
func (s *Stack) clickHouseLinger() time.Duration {
	switch d := s.opts.ClickHouseLinger; {
	case d == 0:
		return DefaultClickHouseLinger
	case d < 0:
		return 0
	default:
		return d
	}
}

// startRunner starts the runner of p; linger is its runner.Config.Linger.
func (s *Stack) startRunner(ctx, rctx context.Context, p runner.Projector, beat func(context.Context) error, linger time.Duration) error {
	r, err := runner.New(ctx, runner.Config{Kafka: s.opts.Kafka, Projector: p, Heartbeat: beat,
		Logger: s.log.Named("projector"), Linger: linger,
		MaxBatch: s.opts.ProjectorMaxBatch, MaxBatchBytes: s.opts.ProjectorMaxBatchBytes})
	if err != nil {
		return fmt.Errorf("projector %s: %w", p.Name(), err)
	}
	s.Projectors[p.Name()] = r
	s.goRun("projector "+p.Name(), func() error { return r.Run(rctx) })
	return nil
}

// OpenClickHouse connects to the audit database (creating it and applying
// its migrations) and returns its projector.
func OpenClickHouse(ctx context.Context, cfg chinfra.Config, log *zap.Logger, opts ...chview.Option) (*chinfra.Conn, *chview.Projector, error) {
	if err := chinfra.EnsureDatabase(ctx, cfg); err != nil {
		return nil, nil, err
	}
	conn, err := chinfra.Connect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := chview.Migrate(ctx, conn); err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	return conn, chview.New(conn, log, opts...), nil
}

func (s *Stack) openClickHouse(ctx context.Context) (*chview.Projector, error) {
	n, err := s.eventPartitions(ctx)
	if err != nil {
		return nil, err
	}
	conn, p, err := OpenClickHouse(ctx, *s.opts.ClickHouse, s.log.Named("clickhouse"), chview.WithPartitions(n))
	if err != nil {
		return nil, err
	}
	s.ch = conn
	return p, nil
}

// eventPartitions returns the events topic's partition count: the audit
// refuses events off their run's partition.
func (s *Stack) eventPartitions(ctx context.Context) (int, error) {
	cl, err := kafka.NewClient(s.opts.Kafka)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	return kafka.PartitionCount(ctx, cl, s.opts.Kafka.WithDefaults().EventsTopic())
}

// OpenIM returns the IM view's projector publishing to the outbox topic.
func OpenIM(kc kafka.Config, log *zap.Logger) (*kafka.Outbox, *im.Projector, error) {
	out, err := kafka.NewOutbox(kc, kc.WithDefaults().IMOutboxTopic())
	if err != nil {
		return nil, nil, err
	}
	p, err := im.NewProjector(im.Config{Logger: log}, out)
	if err != nil {
		out.Close()
		return nil, nil, err
	}
	return out, p, nil
}

func (s *Stack) openIM() (*im.Projector, error) {
	out, p, err := OpenIM(s.opts.Kafka, s.log.Named("im"))
	if err != nil {
		return nil, err
	}
	s.outbox = out
	return p, nil
}

// projectorLag reads every view's consumer group, whichever process runs it.
func (s *Stack) projectorLag(ctx context.Context) ([]api.ProjectorLag, error) {
	var out []api.ProjectorLag
	for _, name := range events.Views() {
		parts, err := kafka.GroupLag(ctx, s.opts.Kafka, runner.Group(s.opts.Kafka, name), s.opts.Kafka.WithDefaults().EventsTopic())
		if err != nil {
			return nil, fmt.Errorf("lag of %s: %w", name, err)
		}
		var total int64
		for _, l := range parts {
			total += l
		}
		out = append(out, api.ProjectorLag{Name: name, Lag: total, Partitions: parts})
	}
	return out, nil
}
