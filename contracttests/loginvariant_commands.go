package contracttests

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/xbot-runtime/xbot/commands"
	"github.com/xbot-runtime/xbot/events"
	"github.com/xbot-runtime/xbot/infra/kafka"
	"github.com/xbot-runtime/xbot/services/executor"
)

// CommandsAccounted checks that every record of the commands topic was
// either admitted — an event of the log names its commandId, and the
// record's key is that command's runId on the run's partition — or
// dead-lettered by the executor (a dead letter names the record's partition
// and offset). It returns an error listing every record that is neither.
// Call it once the executor has consumed every command.
func CommandsAccounted(ctx context.Context, cfg kafka.Config) error {
	admitted := map[string]bool{}
	err := kafka.ReadTopic(ctx, cfg, cfg.EventsTopic(), func(r kafka.Record) error {
		if e, err := events.Decode(r.Value); err == nil && e.CommandID != "" {
			admitted[e.CommandID] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	dead := map[string]bool{}
	err = kafka.ReadTopic(ctx, cfg, cfg.DeadLetterTopic(), func(r kafka.Record) error {
		if r.Headers[executor.HeaderSource] == "executor" {
			dead[r.Headers[executor.HeaderSourcePartition]+"/"+r.Headers[executor.HeaderSourceOffset]] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	n, err := eventPartitions(ctx, cfg)
	if err != nil {
		return err
	}
	var errs []error
	err = kafka.ReadTopic(ctx, cfg, cfg.CommandsTopic(), func(r kafka.Record) error {
		if dead[strconv.Itoa(int(r.Partition))+"/"+strconv.FormatInt(r.Offset, 10)] {
			return nil
		}
		c, _, derr := commands.Decode(r.Value)
		switch {
		case derr != nil:
			errs = append(errs, fmt.Errorf("command record at partition %d offset %d is undecodable and not dead-lettered", r.Partition, r.Offset))
		case !admitted[c.CommandID]:
			errs = append(errs, fmt.Errorf("command %s at partition %d offset %d was neither admitted nor dead-lettered", c.CommandID, r.Partition, r.Offset))
		default:
			if rerr := Routed(r, c.RunID, n); rerr != nil {
				errs = append(errs, fmt.Errorf("command %s was admitted from a misrouted record: %w", c.CommandID, rerr))
			}
		}
		return nil
	})
	return errors.Join(err, errors.Join(errs...))
}
